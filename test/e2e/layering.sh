# The module's parts depend on each other one way (docs/design.md): the
# driver library (drv/) knows nothing of UCT glue or transports, the
# transports and the glue use only drv/'s public headers, and gaudi_copy and
# gaudi_ipc do not know each other. A new include that breaks this fails
# here, naming it.
. "$(dirname "$0")/common.bash"
# the build's UCX source tree: comments and docs name its files too
: "${GAUDI_UCX_TREE:?the UCX source tree of this build}"

src=$(cd "$(dirname "$0")/../.." && pwd)/src
g=$src/uct/gaudi
public='gaudi_(device|own|mem|share|dma|lib|buf|pci)\.h'

# includes FILES...: "file: included path" for every <uct/gaudi/...> include
includes() {
    grep -Ho '#include <uct/gaudi/[^>]*>' "$@" |
        sed 's|:#include <uct/gaudi/|: |; s|>$||'
}

bad=$(includes "$g"/drv/*.[ch] | grep -E ': (base|copy|ipc)/' || true)
[ -z "$bad" ] || fail "drv/ includes UCT glue or a transport: $bad"
ok "drv/ includes nothing of base/, copy/ or ipc/"

bad=$(includes "$g"/base/*.[ch] "$g"/copy/*.[ch] "$g"/ipc/*.[ch] \
               "$src"/tools/perf/gaudi/*.c |
      grep ': drv/' | grep -Ev ": drv/$public\$" || true)
[ -z "$bad" ] || fail "an internal header of drv/ used outside it: $bad"
ok "base/, copy/, ipc/ and the perftest module use drv/'s public headers" \
   "only ($public)"

bad=$(includes "$g"/copy/*.[ch] | grep ': ipc/' || true)
bad+=$(includes "$g"/ipc/*.[ch] | grep ': copy/' || true)
bad+=$(includes "$g"/base/*.[ch] | grep -E ': (copy|ipc)/' || true)
[ -z "$bad" ] || fail "the transports or the glue know each other: $bad"
ok "gaudi_copy and gaudi_ipc do not include each other; base/ neither"

bad=$(grep -Hn '#include "\.\./' "$g"/*/*.[ch] || true)
[ -z "$bad" ] || fail "a relative include across folders (not checked" \
                      "above): $bad"

# no circle among drv/'s files: a file and its header are one part; an
# include of another part's header is an edge (tsort names a loop). Only
# drv/: elsewhere a header of types is shared both ways by design (UCX's
# iface and ep; emu_ctx.h), and the calls are what is checked below
for room in drv; do
    edges=$(for f in "$g/$room"/*.[ch]; do
                from=$(basename "${f%.[ch]}")
                grep -ho '#include "[a-z_0-9]*\.h"' "$f" |
                    sed 's/#include "\(.*\)\.h"/\1/' |
                    while read -r to; do
                        [ "$to" = "$from" ] || echo "$from $to"
                    done
            done)
    loop=$(echo "$edges" | tsort 2>&1 >/dev/null || true)
    [ -z "$loop" ] || fail "a circle among $room/'s files: $loop"
    ok "no circle among $room/'s files ($(echo "$edges" | wc -l) includes)"
done

# nor of calls, read from the build's objects: a function defined in one
# file and called from another is an edge, whichever header declares it (a
# declaration in a third file's header hides a circle from the includes)
objs=$(find "${GAUDI_OBJ_TREE:-$GAUDI_UCX_TREE}" -name '*.o' \
            \( -name 'libuct_gaudi_la-*' -o -name 'libgaudi_emu_la-*' -o \
               -name 'libuct_hlgaudi_la-*' \) -path '*/.libs/*' 2>/dev/null |
       sort)
if [ -z "$objs" ] && [[ "${GAUDI_BUILD:-}" == plugin* ]]; then
    # the plugin's Makefile compiles and links in one step
    ok "calls between files: checked on the in-tree build's objects (the" \
       "plugin build keeps none; its sources are the same)"
else
    [ -n "$objs" ] || fail "no object of the module under" \
                           "${GAUDI_OBJ_TREE:-$GAUDI_UCX_TREE} (GAUDI_OBJ_TREE)"
    command -v nm > /dev/null || fail "no nm to read the objects with"
    part() { basename "$1" .o | sed 's/^lib[a-z_]*_la-//'; }
    # one object per source, no more (a renamed source leaves its old
    # object behind), no less (an object compiled otherwise is not read)
    srcs=$(ls "$g"/{base,copy,ipc,drv,emu}/*.c | xargs -n1 basename |
           sed 's/\.c$//' | LC_ALL=C sort)
    have=$(for o in $objs; do part "$o"; done | LC_ALL=C sort)
    missing=$(LC_ALL=C comm -23 <(echo "$srcs") <(echo "$have"))
    [ -z "$missing" ] || fail "no object of these sources (GAUDI_OBJ_TREE):" \
                              $missing
    objs=$(for o in $objs; do
               LC_ALL=C comm -12 <(echo "$srcs") <(part "$o") | grep -q . &&
                   echo "$o"
           done || true)
    defs=$(for o in $objs; do
               nm --defined-only -g "$o" | awk -v p="$(part "$o")" \
                   'NF == 3 && $2 == "T" { print $3, p }'
           done | LC_ALL=C sort -u)
    edges=$(for o in $objs; do
                nm -u "$o" | awk -v p="$(part "$o")" '{ print $2, p }'
            done | LC_ALL=C sort -u | LC_ALL=C join - <(echo "$defs") |
                awk '$2 != $3 { print $2, $3 }' |
            sort -u)
    loop=$(echo "$edges" | tsort 2>&1 >/dev/null || true)
    [ -z "$loop" ] || fail "a circle of calls among the module's files: $loop"
    ok "no circle of calls among the module's $(echo "$objs" | wc -w) objects" \
       "($(echo "$edges" | wc -l) file-to-file calls)"
fi

# and no ioctl outside drv/: the transports talk to the driver through it
bad=$(grep -Hn 'uct_gaudi_ioctl\|seam_ops->' "$g"/base/*.c "$g"/copy/*.c \
                                             "$g"/ipc/*.c || true)
[ -z "$bad" ] || fail "a driver call outside drv/: $bad"
ok "no ioctl or seam call outside drv/"

# Names follow the files: a function declared in drv/gaudi_X.h is
# uct_gaudi_X or uct_gaudi_X_*, so that a name says where it lives
bad=$(perl -e '
    for my $f (@ARGV) {
        open(my $fh, "<", $f) or die "$f: $!";
        local $/;
        my $s = <$fh>;
        (my $part = $f) =~ s|.*/gaudi_||;
        $part =~ s|\.h$||;
        $s =~ s|/\*.*?\*/| |gs;                      # comments
        $s =~ s|^\s*#(?:[^\n]*\\\n)*[^\n]*||mg;      # preprocessor lines
        my ($depth, $top) = (0, "");                 # file scope only
        for my $c (split //, $s) {
            $depth++ if $c eq "{";
            $top .= " " if $c eq "}";
            $top .= $c if ($depth == 0) && ($c ne "{");
            $depth-- if $c eq "}";
        }
        while ($top =~ /\b(uct_gaudi_\w+)\s*\(/g) {
            print "$f: $1\n" unless $1 =~ /^uct_gaudi_\Q$part\E(_|$)/;
        }
    }' "$g"/drv/gaudi_*.h)
[ -z "$bad" ] || fail "a function of drv/gaudi_X.h not named uct_gaudi_X_*:" \
                      "$bad"
ok "every function declared in drv/gaudi_X.h is named uct_gaudi_X_*"

# No stale path: every file of ours that a comment or a doc names exists
# (files of UCX's tree, such as base/uct_iface.h or test/gtest/..., are
# looked up in it: GAUDI_UCX_TREE, the build's UCX source tree)
top=$(dirname "$src")
mentions=$(cd "$top" &&
           grep -rhoIP --include='*.[ch]' --include='*.cc' --include='*.sh' \
               --include='*.bash' --include='*.md' --include='*.am' \
               --include='*.m4' --include='*.ac' --include='*.in' \
               --include='*.mk' '(?<![\w/.<-])(?:(?:src/uct/gaudi/)?(?:base|drv|emu|copy|ipc|seam)/[a-z0-9_]+\.(?:c|h|am)|(?:test|contrib|docs|bench|plugin)/[a-z0-9_/.-]*[a-z0-9_]\.(?:c|h|cc|sh|bash|am|m4|md|in|supp|patch)|(?:gaudi|emu)_[a-z0-9_]+\.(?:c|h|cc))\b' \
               src docs README.md test contrib plugin bench Makefile.am \
               configure.ac | sort -u) ||
    fail "cannot read the comments and docs (grep -P)"
missing=""
for m in $mentions; do
    case $m in
    */*) for d in "$top" "$g" "$src" "$GAUDI_UCX_TREE" \
                  "$GAUDI_UCX_TREE/src" "$GAUDI_UCX_TREE/src/uct"; do
             # a file configure makes is there as its template
             [ -e "$d/$m" ] || [ -e "$d/$m.in" ] && continue 2
         done ;;
    *)   [ -n "$(find "$top/src" "$top/test" "$top/bench" -name "$m" \
                     -print -quit)" ] && continue ;;
    esac
    missing+=" $m"
done
[ -z "$missing" ] || fail "comments or docs name files that do not exist:" \
                          "$missing"
ok "every file of ours named in a comment or a doc exists" \
   "($(echo "$mentions" | wc -w) names)"

# ABI generations are told apart in one place: the descriptor table of
# seam/gaudi_abi.h (uct_gaudi_abi_desc); no code compares generations
bad=$(grep -HnE '([<>]=?|[!=]=)\s*UCT_GAUDI_ABI_[A-Z]|UCT_GAUDI_ABI_[A-Z]+\s*([<>]=?|[!=]=)|case UCT_GAUDI_ABI_' \
          "$g"/*.h "$g"/*/*.[ch] "$src"/tools/perf/gaudi/*.[ch] |
      grep -v '^[^:]*/seam/gaudi_abi\.h:' || true)
[ -z "$bad" ] || fail "an ABI generation compared outside the descriptor" \
                      "table of seam/gaudi_abi.h: $bad"
ok "ABI generations are told apart only by seam/gaudi_abi.h's descriptors"

# Functions stay short enough to read at once: under 80 lines from the
# opening brace (at the start of a line, as every function here has it) to
# the closing one
long=$(perl -ne '
    s{//.*}{}; s{/\*.*?\*/}{}g; s{"(?:[^"\\]|\\.)*"}{""}g; s{'"'"'(?:[^'"'"'\\]|\\.)*'"'"'}{}g;
    if (/^\{/ && !$depth) { $start = $.; }
    $depth += () = /\{/g;
    $depth -= () = /\}/g;
    if ($start && !$depth) {
        print "$ARGV:$start: ", $. - $start + 1, " lines\n"
            if $. - $start + 1 >= 80;
        $start = 0;
    }
    ($depth, $start) = (0, 0), close ARGV if eof;' "$src"/uct/gaudi/*/*.c "$src"/tools/perf/gaudi/*.c)
[ -z "$long" ] || fail "functions of 80 lines or more: $long"
ok "every function in src/ is under 80 lines"

# seam/ is the contract drv/ and emu/ share: plain C, and neither side
# includes the other
bad=$(grep -Hn '#include' "$g"/seam/*.h |
      grep -vE '#include (<(linux|sys)/[a-z_]+\.h>|<std[a-z]+\.h>|<uct/gaudi/seam/gaudi_[a-z_]+\.h>|"gaudi_abi_layout\.h")' || true)
[ -z "$bad" ] || fail "seam/ includes more than system headers and seam/: $bad"
bad=$(includes "$g"/emu/*.[ch] | grep -E ': (drv|base|copy|ipc)/' || true)
bad+=$(includes "$g"/drv/*.[ch] | grep ': emu/' || true)
[ -z "$bad" ] || fail "drv/ and emu/ include each other: $bad"
ok "seam/ is plain C; drv/ and emu/ meet only in it"

# README's Layout section names every part of the module
top=$(dirname "$src")
for d in "$g"/*/; do
    d=$(basename "$d")
    grep -qE "^ {8}$d/ " "$top/README.md" ||
        fail "README.md's Layout section does not name src/uct/gaudi/$d/"
done
ok "README.md's Layout section names every directory of src/uct/gaudi"

# the unit tests are laid out like the module: test/unit/X/ tests
# src/uct/gaudi/X/, and no test lies outside those folders
parts=
for d in "$top"/test/unit/*/; do
    d=$(basename "$d")
    [ -d "$g/$d" ] || fail "test/unit/$d/ tests no src/uct/gaudi/$d/"
    parts+=" $d"
done
bad=$(cd "$top/test/unit" && ls ./*.cc ./*.h 2>/dev/null |
      grep -v '^\./main\.cc$' || true)
[ -z "$bad" ] || fail "a unit test outside test/unit's folders:" $bad
ok "test/unit/ is laid out like src/uct/gaudi/ (${parts# })"

# the tests share their support code, one way: test/common/ (sockets,
# processes, the emulator, logs, test tables) and test/e2e/ucp/ (a UCP
# program's context, endpoints and Gaudi buffers) know no test program, and
# the control messages of fd passing are built in one place only
bad=$(grep -Hn '#include "' "$top"/test/common/*.{h,cc} "$top"/test/e2e/ucp/*.[ch] |
      grep -vE '#include "(gt|ucp)_[a-z_]+\.h"' || true)
[ -z "$bad" ] || fail "shared test support includes a test program's header: $bad"
bad=$(grep -rlE 'CMSG_FIRSTHDR *\(|cmsg_type *=' "$top"/test \
          --include='*.c' --include='*.cc' --include='*.h' |
      grep -v '/test/common/gt_sock\.cc$' || true)
[ -z "$bad" ] || fail "fd passing written again outside test/common/gt_sock.cc:" \
                      $bad
bad=$(grep -ln 'ucp_init\|ucp_worker_create' "$top"/test/e2e/*.c \
          "$top"/test/dmabuf/*.c || true)
[ -z "$bad" ] || fail "a UCP test program opens UCP itself (not through" \
                      "test/e2e/ucp/ucp_app.c):" $bad
ok "test/common/ and test/e2e/ucp/ are the tests' one copy of their support"
