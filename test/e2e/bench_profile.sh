# The speed profile's benchmark (bench/profile.sh, issue 24) runs on this
# build, through UCT and UCP, and prints every row, and no figure passes the modelled link: a
# model figure above 25 GB/s would mean completions that the link could not
# have carried (the model clock counted too little). Nothing here compares
# times: the slowed-down rows are printed, not judged.
. "$(dirname "$0")/common.bash"
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp)
trap 'rm -rf "$out" "$out.bad" "$UCX_GAUDI_EMU_STATE_DIR"' EXIT

rc=0
REPS=1 LATENCIES=8 SIZES=65536 BENCH_BUILD=in-tree PREFIX="$PREFIX" \
    timeout 300 bash "$top/bench/profile.sh" 8 > "$out" 2>&1 || rc=$?
[ $rc -eq 0 ] || fail "bench/profile.sh: exit status $rc: $(tail -n 15 "$out")"

rows=$(awk '$4 ~ /^(H2D|D2H)$/' "$out")
# uct put and get, each with the copy x1 and x4; ucp put, get and tag
[ "$(wc -l <<< "$rows")" -eq 7 ] ||
    fail "bench/profile.sh did not print its 7 rows: $(cat "$out")"
# L via op dir size unit copy min med max /link wall depth
awk '{ if (!($8 > 0 && $10 <= 25.01 && $13 >= 1)) { print; bad = 1 } }
     END { exit bad }' <<< "$rows" > "$out.bad" ||
    fail "a model figure is not in (0, 25 GB/s], or no CS was in flight: $(cat "$out.bad")"
ok "bench/profile.sh: 7 rows, every model figure within the link" \
   "($(awk '{ printf "%s%s %s %s %s", (NR > 1) ? ", " : "", $2, $3, $7, $9 }' \
          <<< "$rows") GB/s)"
