# docs/configuration.md and UCX's own list of our knobs (ucx_info -c -f)
# cannot drift: every knob UCX knows is documented, every documented knob
# exists, each has help text in ucx_info, and each documented default is
# the default (the documented value, parsed by UCX, prints as the default
# does: "16us" and "16.00us" are one value, "256k" and "1M" are not).
#
# The "| variable | default | meaning |" tables of docs/configuration.md: a
# section heading names its prefix (`UCX_GAUDI_COPY_*`), a row's first cell
# its knobs in backquotes (a name
# relative to the prefix, or the whole name; `RCACHE_*` stands for every
# knob it matches), its second cell their defaults: a value in backquotes
# is checked, words ("per user", "UCX's") describe one. The knobs every
# UCT transport inherits from UCX's interface table (ALLOC, FAILURE, ...)
# are UCX's, not ours.
. "$(dirname "$0")/common.bash"
doc=$(cd "$(dirname "$0")/../.." && pwd)/docs/configuration.md
tmp=$(mktemp -d /tmp/ucx-gaudi-knob-docs.XXXXXX)
trap 'rm -rf "$tmp" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT

"$UCX_INFO" -c -f > "$tmp/full" 2>&1 || fail "ucx_info -c -f: $(tail -n 5 "$tmp/full")"
# NAME=VALUE of every knob, and those of ours
grep -E '^UCX_[A-Z0-9_]+=' "$tmp/full" > "$tmp/all"
grep -E '^UCX_GAUDI_' "$tmp/all" | sort -u > "$tmp/ours"
[ -s "$tmp/ours" ] || fail "ucx_info -c -f lists no UCX_GAUDI_ knob"

# UCX's inherited interface knobs: those every one of three UCX transports
# has
for t in SELF POSIX CMA; do
    sed -n "s/^UCX_${t}_\([A-Z0-9_]*\)=.*/\1/p" "$tmp/all" | sort -u > "$tmp/k.$t"
done
comm -12 "$tmp/k.SELF" "$tmp/k.POSIX" | comm -12 - "$tmp/k.CMA" > "$tmp/ucx_own"
[ -s "$tmp/ucx_own" ] || fail "found no knob UCX's transports share"

# the documented rows: "NAME<TAB>DEFAULT" (DEFAULT: the backquoted value,
# or "-" for words), the names resolved against their section's prefix
awk -F'|' '
    /^## / {
        prefix = ""
        if (match($0, /`UCX_[A-Z0-9_]*\*`/)) {
            prefix = substr($0, RSTART + 1, RLENGTH - 3)
        }
        next
    }
    /^\| *variable *\|/ { table = 1; next }
    !/^\|/ { table = 0 }
    prefix != "" && table && /^\| `/ {
        nn = split($2, names, /, /)
        nd = split($3, defs, /, /)
        for (i = 1; i <= nn; i++) {
            name = names[i]; gsub(/[` ]/, "", name)
            def  = (nn == nd) ? defs[i] : $3
            gsub(/^ +| +$/, "", def)
            if (def !~ /^`[^`]*`$/) { def = "-" } else { gsub(/`/, "", def) }
            print prefix "\t" name "\t" def
        }
    }' "$doc" > "$tmp/rows"
[ -s "$tmp/rows" ] || fail "no knob table found in $doc"

# resolve PREFIX NAME: the knob a row means: PREFIX+NAME, else
# UCX_GAUDI_+NAME (the emulator's rows spell EMU_), else NAME; a glob stays
# one
resolve() {
    local cand
    for cand in "$1$2" "UCX_GAUDI_$2" "$2"; do
        if [[ "$cand" == *'*' ]]; then
            grep -q "^${cand%\*}" "$tmp/ours" && { echo "$cand"; return; }
        elif grep -q "^$cand=" "$tmp/ours"; then
            echo "$cand"; return
        fi
    done
    echo "?$2"
}

errors=0
err() { echo "knob_docs: $*"; errors=$((errors + 1)); }

: > "$tmp/documented"
settings=()
while IFS=$'\t' read -r prefix name def; do
    knob=$(resolve "$prefix" "$name")
    case "$knob" in
    \?GAUDI_MAPPING_TABLE) continue ;;   # an environment variable of SynapseAI's
    \?*) # a knob of the other build (e.g. DMABUF: plugin only) is said so
         grep -F "\`$name\`" "$doc" | grep -qiE 'plugin build only|in-tree only' ||
             err "documented but unknown to ucx_info: $prefix$name (${prefix}* section)"
         continue ;;
    esac
    echo "$knob" >> "$tmp/documented"
    [ "$def" = - ] || [[ "$knob" == *'*' ]] || settings+=("$knob=$def")
done < "$tmp/rows"

# every knob of ours is documented (by name or by a glob row)
while IFS='=' read -r knob _; do
    suffix=${knob#UCX_GAUDI_COPY_}; suffix=${suffix#UCX_GAUDI_IPC_}
    [ "$suffix" != "$knob" ] && grep -qx "$suffix" "$tmp/ucx_own" && continue
    grep -qx "$knob" "$tmp/documented" && continue
    covered=0
    while read -r glob; do
        [[ "$glob" == *'*' ]] && [[ "$knob" == ${glob} ]] && covered=1
    done < "$tmp/documented"
    [ $covered = 1 ] || err "$knob: not documented in docs/configuration.md"
done < "$tmp/ours"

# every knob of ours has help text: the "# ..." lines above it, other than
# the syntax line
awk '/^#/ { if ($0 !~ /^# *syntax:/ && $0 !~ /^#$/) doc = 1; next }
     /^UCX_GAUDI_/ { split($0, kv, "="); if (!doc) print kv[1]; doc = 0; next }
     { doc = 0 }' "$tmp/full" > "$tmp/nohelp"
while read -r knob; do err "$knob: no help text in ucx_info -c -f"; done < "$tmp/nohelp"

# the documented defaults are the defaults: set them all, nothing changes
env "${settings[@]}" "$UCX_INFO" -c > "$tmp/set" 2>&1 ||
    err "ucx_info -c with the documented defaults failed: $(tail -n 3 "$tmp/set")"
for s in "${settings[@]}"; do
    knob=${s%%=*}
    want=$(grep "^$knob=" "$tmp/ours")
    got=$(grep "^$knob=" "$tmp/set")
    [ "$want" = "$got" ] ||
        err "$knob: documented default '${s#*=}' reads as '${got#*=}'," \
            "the default is '${want#*=}'"
done

[ $errors -eq 0 ] || fail "$errors disagreement(s) between docs/configuration.md and ucx_info"
ok "$(wc -l < "$tmp/ours") knobs of ucx_info -c: all documented with help," \
   "${#settings[@]} documented defaults are the defaults"
