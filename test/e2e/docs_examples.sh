# The documentation's examples run as written (issue 25): a user copies
# them, so a renamed transport, a flag that changed or a device name that
# does not hold for every process must fail a test, not the user.
#
# The rule, for README.md and docs/*.md:
#
# A code block is a fenced one (``` or ~~~, its info string the language)
# or an indented one (lines indented by 4 or more spaces, after a blank
# line, outside a fence). It is a *command block* when
#   - it is fenced as sh, bash or shell, or
#   - it is indented or fenced without a language, and its first line that
#     is not blank and not a comment (#) starts, past any NAME=value words,
#     with a path (a word with a "/" that does not end in "/": ./configure,
#     contrib/test.sh, /opt/ucx/bin/ucx_info) or with one of $commands
#     below.
# The last non-blank line before a command block must be a marker:
#   <!-- runnable -->            run it, on every build
#   <!-- runnable: in-tree -->   run it on the in-tree UCX 1.13.1 build only
#   <!-- runnable: plugin -->    run it on the plugin builds (UCX 1.22) only
#   <!-- not runnable: REASON -->  do not run it; REASON says why
# A command block without a marker fails the test. A marker before any
# other block counts too (a runnable one is run).
#
# A runnable block runs as written with bash -e, in an empty temporary
# directory, with $PREFIX/bin first in PATH, UCX_GAUDI_EMU_DEVICES=2 unless
# the block sets its own, a UCX_GAUDI_EMU_STATE_DIR of its own, for at most
# 60 s; it must exit 0. A failure prints the block, the end of its output
# and a replay command.
#
# Arguments: FILE:LINE ... runs only the blocks that start at those lines
# (the replay). DOCS_DIR: where README.md and docs/ are (default: this
# repository).
. "$(dirname "$0")/common.bash"
commands=" ucx_info ucx_perftest mpirun mpicc make export cd sudo apt-get
           git patchelf docker bash sh env eval ip unshare mkdir rm gcc g++ "
docs_dir=${DOCS_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
case "$GAUDI_BUILD" in
in-tree*) build=in-tree ;;
*)        build=plugin ;;
esac
work=$(mktemp -d /tmp/ucx-gaudi-docs.XXXXXX)
trap 'rm -rf "$work" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT
only=" $* "

cd "$docs_dir"
files=(README.md docs/*.md)

# Extract every code block: $work/blocks holds one line per block,
# "N<TAB>FILE<TAB>LINE<TAB>KIND<TAB>MARKER" (KIND: "cmd" for a command
# block, "other" for another one), and $work/N.sh its text.
awk -v out="$work" -v cmds="$commands" '
function marker_of(line) {
    if (line ~ /^[ \t]*<!-- *runnable *-->[ \t]*$/) return "runnable"
    if (line ~ /^[ \t]*<!-- *runnable: *in-tree *-->[ \t]*$/) return "runnable:in-tree"
    if (line ~ /^[ \t]*<!-- *runnable: *plugin *-->[ \t]*$/) return "runnable:plugin"
    if (line ~ /^[ \t]*<!-- *not runnable: *[^ -].*-->[ \t]*$/) return "not-runnable"
    return ""
}
function is_cmd_line(line,   n, w, i) {
    n = split(line, w, /[ \t]+/)
    for (i = 1; i <= n; i++) {
        if (w[i] == "") continue
        if (w[i] ~ /^[A-Za-z_][A-Za-z0-9_]*=/) continue
        if (w[i] ~ /\// && w[i] !~ /\/$/) return 1
        return index(cmds, " " w[i] " ") > 0
    }
    return 0
}
function first_cmd(   i, l) {
    for (i = 1; i <= nb; i++) {
        if (b[i] ~ /^[ \t]*$/ || b[i] ~ /^[ \t]*#/) continue
        # a command continued on the next lines (\ at the end) is one line
        l = b[i]
        while (l ~ /\\$/ && i < nb) { sub(/\\$/, " ", l); l = l b[++i] }
        return is_cmd_line(l)
    }
    return 0
}
function emit(kind,   i, f) {
    while (nb > 0 && b[nb] ~ /^[ \t]*$/) nb--
    ++num
    f = out "/" num ".sh"
    for (i = 1; i <= nb; i++) print b[i] > f
    close(f)
    printf "%d\t%s\t%d\t%s\t%s\n", num, fname, start, kind, mark > (out "/blocks")
}
# (a block that ends its file ends there; an unclosed fence too)
FNR == 1 {
    if (inind) emit(first_cmd() ? "cmd" : "other")
    if (infence) emit(lang ~ /^(sh|bash|shell)$/ || (lang == "" && first_cmd()) ? "cmd" : "other")
    infence = 0; inind = 0; lastnb = ""; prevblank = 1; fname = FILENAME
}
{
    line = $0
    if (infence) {
        if (line ~ "^ *" fence "[" fch "]*[ \t]*$") {
            emit((lang ~ /^(sh|bash|shell)$/ || (lang == "" && first_cmd())) ? "cmd" : "other")
            infence = 0; lastnb = line; prevblank = 0
        } else {
            # the indentation of the fence is not part of the block
            l = line
            for (i = 0; i < findent && substr(l, 1, 1) == " "; i++)
                l = substr(l, 2)
            b[++nb] = l
        }
        next
    }
    if (inind) {
        if (line ~ /^[ \t]*$/) { b[++nb] = ""; next }
        match(line, /^ */)
        if (RLENGTH >= iindent) { b[++nb] = substr(line, iindent + 1); next }
        emit(first_cmd() ? "cmd" : "other")
        inind = 0; lastnb = "(end of block)"
    }
    if (match(line, /^ *(```+|~~~+)/)) {
        infence = 1; nb = 0; start = FNR
        fch = substr(line, RSTART + RLENGTH - 1, 1)
        fence = substr(line, RSTART, RLENGTH); sub(/^ */, "", fence)
        match(line, /^ */); findent = RLENGTH
        lang = line; sub(/^ *(```+|~~~+)[ \t]*/, "", lang); sub(/[ \t{].*/, "", lang)
        mark = marker_of(lastnb)
        next
    }
    if (prevblank && line ~ /^    +[^ ]/) {
        match(line, /^ */); iindent = RLENGTH
        inind = 1; nb = 0; start = FNR
        b[++nb] = substr(line, iindent + 1)
        mark = marker_of(lastnb)
        next
    }
    prevblank = (line ~ /^[ \t]*$/)
    if (!prevblank) lastnb = line
}
END {
    if (inind) emit(first_cmd() ? "cmd" : "other")
    if (infence) emit(lang ~ /^(sh|bash|shell)$/ || (lang == "" && first_cmd()) ? "cmd" : "other")
}
' "${files[@]}"
[ -s "$work/blocks" ] || fail "no code block found in ${files[*]}"
# DOCS_LIST=1: list the blocks found, and stop
if [ "${DOCS_LIST:-0}" = 1 ]; then
    while IFS=$'\t' read -r n file line kind mark; do
        printf '%s:%s %s %s | %s\n' "$file" "$line" "$kind" "${mark:--}" \
            "$(grep -m1 . "$work/$n.sh" | cut -c1-50)"
    done < "$work/blocks"
    exit 0
fi

# Every command block carries a marker
unmarked=0
while IFS=$'\t' read -r n file line kind mark; do
    if [ "$kind" = cmd ] && [ -z "$mark" ]; then
        echo "FAIL: $file:$line: a command block without a marker" \
             "(<!-- runnable --> or <!-- not runnable: REASON -->):"
        sed 's/^/    | /' "$work/$n.sh" | head -n 6
        unmarked=$((unmarked + 1))
    fi
done < "$work/blocks"

# run_block N FILE LINE: run block N as a user would; returns its status
run_block() {
    local n=$1 file=$2 line=$3 dir=$work/run.$1 rc=0
    mkdir -p "$dir/cwd" "$dir/state"
    ( cd "$dir/cwd" &&
      export PATH="$PREFIX/bin:$PATH" UCX_GAUDI_EMU_DEVICES=2 \
             UCX_GAUDI_EMU_STATE_DIR="$dir/state" &&
      # (a server the block started in the background goes with it)
      exec timeout -k 5 60 bash -e -c 'trap "exit 143" TERM
          trap "kill \$(jobs -p) 2> /dev/null || true" EXIT
          . "$0"' "$work/$n.sh" ) > "$dir/out" 2>&1 || rc=$?
    return $rc
}

failed=0 ran=0 skipped=0
while IFS=$'\t' read -r n file line kind mark; do
    case " $* " in
    "  ") ;;
    *" $file:$line "*) ;;
    *) continue ;;
    esac
    case "$mark" in
    runnable) ;;
    runnable:in-tree|runnable:plugin)
        if [ "${mark#runnable:}" != "$build" ]; then
            skipped=$((skipped + 1))
            continue
        fi ;;
    *) continue ;;
    esac
    ran=$((ran + 1))
    if run_block "$n" "$file" "$line"; then
        ok "$file:$line runs: $(grep -v '^[[:space:]]*#' "$work/$n.sh" |
                                grep -m1 . | cut -c1-60)"
    else
        rc=$?
        failed=$((failed + 1))
        echo "FAIL: $file:$line: the example exits $rc$([ $rc -ne 124 ] ||
                                  echo ' (timed out after 60 s)'):"
        sed 's/^/    | /' "$work/$n.sh"
        echo "  the end of its output:"
        tail -n 15 "$work/run.$n/out" | sed 's/^/    > /'
        echo "  replay: PREFIX=$PREFIX DEMO=$DEMO GAUDI_BUILD=$GAUDI_BUILD" \
             "${UCX_PLUGIN_PATH:+UCX_PLUGIN_PATH=$UCX_PLUGIN_PATH }bash" \
             "$(cd "$(dirname "$0")" && pwd)/docs_examples.sh $file:$line"
    fi
done < "$work/blocks"

[ $# -eq 0 ] || [ $ran -gt 0 ] || fail "no runnable block starts at $*"
[ $unmarked -eq 0 ] || fail "$unmarked command block(s) without a marker"
[ $failed -eq 0 ] || fail "$failed of $ran runnable example(s) failed"
ok "$ran runnable examples passed ($skipped for the other build not run)," \
   "$(awk -F'\t' '$4 == "cmd"' "$work/blocks" | wc -l) command blocks marked"
