#!/usr/bin/env bash
#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# The regret of UCP's own protocol choice (issue 24 §3): for each message
# size, the bandwidth of UCP's default configuration against the best of a
# set of forced configurations a user could set (thresholds, rendezvous
# schemes, lanes, transports), all measured in this one run:
#
#   regret = max(0, best forced / default - 1)
#
# per (test, memory, size); per (test, memory) the geometric mean of
# (1 + regret) - 1 over the sizes and the worst size; per profile one line.
# Goals (printed, not judged): geometric mean <= 5 %, worst size <= 15 %.
#
#   tests     ucx_perftest -t tag_bw and -t ucp_put_bw between two processes
#             on a 2-device emulated node, each owning its Gaudi (the
#             client sends or puts, the server receives): -m gaudi,gaudi
#             (Gaudi -> Gaudi) and -m host,gaudi (the client's host memory
#             -> the server's Gaudi memory); UCX_TLS=<copy>,gaudi_ipc,posix,
#             self as bench/run.sh (<copy>: gaudi_copy, gaudi_cpy in UCX 1.22)
#             The server is pinned to one CPU, the client to another.
#   sizes     8 B .. 64 MiB by x8. At each size a probe of the default (16
#             MiB moved, not counted) sets the iterations of every run so
#             that the default takes about $TARGET s (a tenth more as
#             warm-up); a slower configuration takes longer, and one still
#             running after $RUN_LIMIT s is stopped: its last progress row
#             (ucx_perftest prints one a second) is its figure, marked "*"
#   profiles  none (the emulator's defaults: a "DMA" is a memcpy on this
#             machine's cores); gaudi2-L2 and gaudi2-L20: the modelled
#             Gaudi2 (docs/emulator.md §8b) with a submission latency of 2
#             and 20 us. ucx_perftest reports wall time, which under a
#             profile also includes the emulator's CPU copy: these are not
#             the model-time figures of bench/profile.sh
#   configs   $CONFIGS; a knob this build's `ucx_info -c` does not list, or
#             a value it refuses, is skipped with a line saying so. A run
#             that fails, errs, or has no figure (hung) is "failed" for
#             that size, printed, and never the best
#
# Noise: the default configuration runs twice at each size (first and last
# of that size's runs); the second against the first is printed as the
# noise. The best of several forced configurations is a maximum over noisy
# figures, so a regret below the noise says nothing.
#
# Measurements, not tests: the script exits 0 when it ran, whatever the
# figures; non-zero only when it cannot set up.
#
# Environment: BENCH_BUILD, PREFIX, GAUDI_LIBDIR (bench/build.bash);
# PROFILES (default "none gaudi2-L2 gaudi2-L20"); SIZES (default
# "8 64 512 4096 32768 262144 2097152 16777216 67108864"); REPS (runs of
# each point, median used, default 1; min/median/max shown when > 1);
# TARGET (seconds, default 0.25); RUN_LIMIT (seconds, default 5, below
# the 60 s timeout of every ucx_perftest); PROBE_BYTES (default 16 MiB);
# MAX_ITERS (default 1000000); PIN=n: no CPU pinning; TESTS (default
# "tag_bw ucp_put_bw"); MEMS (default "gaudi,gaudi host,gaudi");
# CONFIGS: the forced configurations, separated by ";", each
# one or more VAR=VALUE separated by spaces, "{copy}" standing for the copy
# transport's name, optionally prefixed "TEST:" to run it for that test
# only; FULL=1 also prints every configuration's figure;
# BENCH_RESULTS=FILE: the report also replaces this build's section of FILE.
# usage: bench/regret.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/build.bash"
. "$top/contrib/wait-listen.bash"
work=$(mktemp -d /tmp/ucx-gaudi-regret.XXXXXX)
srv=
cleanup() {
    [ -z "$srv" ] || kill "$srv" 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

perftest="$PREFIX/bin/ucx_perftest"
reps=${REPS:-1}
target=${TARGET:-0.25}
probe_bytes=${PROBE_BYTES:-$((16 << 20))}
max_iters=${MAX_ITERS:-1000000}
limit=${RUN_LIMIT:-5}
profiles=${PROFILES:-none gaudi2-L2 gaudi2-L20}
sizes=${SIZES:-8 64 512 4096 32768 262144 2097152 16777216 67108864}
tests=${TESTS:-tag_bw ucp_put_bw}
mems=${MEMS:-gaudi,gaudi host,gaudi}
# the forced configurations: eager only, rendezvous always or from 64 KiB
# (tag messages only: puts have no rendezvous), zero copy always or never,
# each rendezvous scheme (tag only), one rendezvous lane (UCX_MAX_RNDV_LANES
# is its deprecated alias, which ucx_info -c does not list), and no
# gaudi_ipc (Gaudi memory staged through the host)
configs=${CONFIGS:-"tag_bw:UCX_RNDV_THRESH=inf; tag_bw:UCX_RNDV_THRESH=0;
    tag_bw:UCX_RNDV_THRESH=64k; UCX_ZCOPY_THRESH=0; UCX_ZCOPY_THRESH=inf;
    tag_bw:UCX_RNDV_SCHEME=get_zcopy; tag_bw:UCX_RNDV_SCHEME=put_zcopy;
    UCX_MAX_RNDV_RAILS=1; UCX_TLS={copy},posix,self"}

[ -x "$perftest" ] || { echo "bench: no $perftest" >&2; exit 1; }
awk -v l="$limit" 'BEGIN { exit !(l > 1 && l < 50) }' ||
    { echo "bench: RUN_LIMIT is seconds, more than 1, less than 50" >&2; exit 2; }
export UCX_GAUDI_EMU_DEVICES=2
export UCX_GAUDI_EMU_STATE_DIR="$work/emu"
export UCX_WARN_UNUSED_ENV_VARS=n
copy_tl=$(copy_tl_name)
[ -n "$copy_tl" ] || { echo "bench: ucx_info -d lists no gaudi_cpy" >&2; exit 1; }
default_tls=$copy_tl,gaudi_ipc,posix,self

profile_env() {  # PROFILE: its emulator settings, one a line
    case "$1" in
    none) ;;
    gaudi2-L*)
        echo UCX_GAUDI_EMU_PROFILE=gaudi2
        echo "UCX_GAUDI_EMU_PROFILE_LATENCY=${1#gaudi2-L}us" ;;
    *) echo "bench: unknown profile $1 (none, gaudi2-L<us>)" >&2; return 1 ;;
    esac
}
for p in $profiles; do profile_env "$p" > /dev/null || exit 2; done

# the configurations this build has: cfg_test[i] (a test or ""),
# cfg_env[i] (the assignments), cfg_name[i] (without the UCX_ prefixes)
"$PREFIX/bin/ucx_info" -c > "$work/knobs" 2>&1 ||
    { cat "$work/knobs" >&2; echo "bench: ucx_info -c failed" >&2; exit 1; }
cfg_test=() cfg_env=() cfg_name=() skipped=()
while read -r entry; do
    [ -n "$entry" ] || continue
    t=
    if [[ $entry =~ ^([a-z_]+):(.*)$ ]]; then
        t=${BASH_REMATCH[1]} entry=${BASH_REMATCH[2]}
    fi
    entry=${entry//\{copy\}/$copy_tl}
    read -ra assigns <<< "$entry"
    why=
    for a in "${assigns[@]}"; do
        if [[ $a != UCX_*=* ]]; then
            echo "bench: CONFIGS: \"$a\" is not UCX_VAR=VALUE" >&2; exit 2
        elif ! grep -q "^${a%%=*}=" "$work/knobs"; then
            why="this build has no ${a%%=*}"
        fi
    done
    if [ -z "$why" ]; then
        # ucx_info -c parses the value: an invalid one is an error line
        # (on a node of its own, not to wait for the last one's reset)
        env "${assigns[@]}" UCX_GAUDI_EMU_STATE_DIR="$work/check.d" \
            "$PREFIX/bin/ucx_info" -c > "$work/check" 2>&1 || true
        rm -rf "$work/check.d"
        why=$(awk '/UCX +ERROR|Invalid value/ && !w {
                       w = $0; sub(/.*UCX +ERROR +/, "", w) }
                   END { if (w != "") print "refused: " w }' "$work/check")
    fi
    if [ -n "$why" ]; then
        skipped+=("${t:+$t:}$entry: $why")
        continue
    fi
    cfg_test+=("$t")
    cfg_env+=("$entry")
    cfg_name+=("${entry//UCX_/}")
done < <(tr ';' '\n' <<< "$configs")
if [ "${#cfg_env[@]}" = 0 ]; then
    printf 'skipped: %s\n' "${skipped[@]}" >&2
    echo "bench: no configuration to force" >&2
    exit 2
fi

# iters_for SIZE MBPS: iterations that take about $target seconds at MBPS
# (or move $probe_bytes when MBPS is empty: the probe)
iters_for() {
    awk -v s="$1" -v bw="$2" -v t="$target" -v p="$probe_bytes" \
        -v max="$max_iters" 'BEGIN {
            n = (bw == "") ? p / s : t * bw * 1048576 / s
            if (bw == "" && n > 5000) n = 5000
            n = int(n); if (n < 10) n = 10; if (n > max) n = max; print n }'
}

listening() {  # PORT: something listens on it
    local hex
    hex=$(printf ':%04X ' "$1")
    cat /proc/net/tcp /proc/net/tcp6 2> /dev/null |
        awk -v p="$hex" '$4 == "0A" && index($2 " ", p) { f = 1 }
                         END { exit !f }'
}

# the first two CPUs this process may run on: the server is pinned to one,
# the client to the other (unpinned, two polling processes and the
# emulator's threads on 2 cores share them as the scheduler likes, and a
# run's figure then varied 3 times from one run to the next)
cpus=()
if [ "${PIN:-y}" != n ]; then
    mapfile -t cpus < <(awk '/^Cpus_allowed_list:/ {
                                 n = split($2, r, ",")
                                 for (i = 1; i <= n; ++i) {
                                     m = split(r[i], b, "-")
                                     for (c = b[1]; c <= b[m]; ++c) print c } }' \
                            /proc/self/status | head -n 2)
    [ "${#cpus[@]}" = 2 ] || cpus=()
fi

# run TEST MEM SIZE PROFILE ITERS ASSIGNMENTS: one ucx_perftest pair; in
# $result the client's bandwidth in MB/s (ucx_perftest's, 2^20 bytes; from
# the message rate where its MB/s has too few digits), or "fail REASON";
# a client still running after $limit s is stopped and its last progress
# row (one a second) is the figure, with $stopped set (not in a subshell:
# $srv is the server the exit trap kills)
runs=0 stopped=0
run() {
    local test=$1 mem=$2 size=$3 profile=$4 iters=$5 port rc=0 why=
    local -a envs assigns args
    read -ra assigns <<< "$6"
    # each run its own node: an emulated Gaudi2 resets for 0.5 s after its
    # owner leaves, and the next run would wait for it
    envs=(UCX_GAUDI_EMU_STATE_DIR="$work/emu.$runs" UCX_TLS="$default_tls")
    mapfile -t -O ${#envs[@]} envs < <(profile_env "$profile")
    envs+=("${assigns[@]}")
    runs=$((runs + 1))
    port=$((20000 + RANDOM % 12000))
    while listening "$port"; do port=$((20000 + RANDOM % 12000)); done
    args=(-t "$test" -m "$mem" -s "$size" -n "$iters"
          -w $(( iters / 10 > 1000 ? 1000 : iters / 10 > 2 ? iters / 10 : 2 ))
          -p "$port")
    env "${envs[@]}" timeout 60 "$perftest" "${args[@]}" \
        ${cpus[0]:+-c "${cpus[0]}"} > "$work/server" 2>&1 & srv=$!
    if ! wait_listen "$port"; then
        why="the server did not listen: $(grep -m1 -E 'ERROR|rror' \
                                          "$work/server" | cut -c1-120 || true)"
    else
        env "${envs[@]}" timeout -k 5 -s INT "$limit" "$perftest" localhost \
            "${args[@]}" ${cpus[1]:+-c "${cpus[1]}"} > "$work/client" 2>&1 ||
            rc=$?
        if [ "$rc" != 0 ] && [ "$rc" != 124 ]; then
            why="client exit $rc: $(grep -m1 -E 'ERROR|rror' "$work/client" |
                                   cut -c1-120 || true)"
        fi
    fi
    [ -n "$why" ] || [ "$rc" = 124 ] || wait "$srv" || why="server exit $?"
    kill "$srv" 2> /dev/null || true
    wait "$srv" 2> /dev/null || true
    srv=
    rm -rf "$work/emu.$((runs - 1))"
    if [ -n "$why" ]; then
        result="fail $why"
        return
    fi
    # the last "Final:" or progress row ("[thread 0]" first where built
    # with OpenMP): iterations, 3 latencies, 2 MB/s, 2 message rates
    result=$(awk -v s="$size" '
        $1 == "Final:" { o = 1 } $1 == "[thread" { o = 2 }
        $1 ~ /^[0-9]+$/ && NF == 8 { o = 0 }
        o != "" && NF == o + 8 { bw = $(o + 6)
                                 if (bw < 1000) bw = $(o + 8) * s / 1048576 }
        { o = "" }
        END { if (bw > 0) printf "%.6g\n", bw }' "$work/client")
    if [ -z "$result" ]; then
        result="fail $([ "$rc" = 124 ] && echo "no progress in $limit s" ||
                       echo "no Final: row")"
    elif [ "$rc" = 124 ]; then
        stopped=$((stopped + 1))
        result+=" stopped"
    fi
}

# point TEST MEM SIZE PROFILE ITERS ASSIGNMENTS: run $reps times; in
# $result "min median max" MB/s, then "*" if a run was stopped at the
# limit, or "fail REASON" if any run failed
point() {
    local i vals=() mark=
    for ((i = 0; i < reps; ++i)); do
        run "$@"
        [[ $result != fail* ]] || return 0
        [[ $result != *stopped ]] || mark=" *"
        vals+=("${result% stopped}")
    done
    result="$(printf '%s\n' "${vals[@]}" | sort -g |
              awk '{ v[NR] = $1 } END { print v[1], v[int((NR + 1) / 2)], v[NR] }')$mark"
}

human() {  # SIZE: 8 B, 4 KiB, 2 MiB
    awk -v s="$1" 'BEGIN { if (s >= 1048576) printf "%d MiB", s / 1048576;
                           else if (s >= 1024) printf "%d KiB", s / 1024;
                           else printf "%d B", s }'
}

applies() {  # CONFIG TEST: the configuration is forced for that test
    [ -z "${cfg_test[$1]}" ] || [ "${cfg_test[$1]}" = "$2" ]
}

# runs of a profile, for the estimate printed first
runs_per_profile=0
for t in $tests; do
    n=$((2 * reps + 1))  # the default twice, the probe
    for i in "${!cfg_env[@]}"; do
        if applies "$i" "$t"; then n=$((n + reps)); fi
    done
    runs_per_profile=$((runs_per_profile + n * $(wc -w <<< "$mems") *
                                           $(wc -w <<< "$sizes")))
done

fmt3() {  # MIN MED MAX [*]: the median, and min-max when REPS > 1
    if [ "$reps" -gt 1 ]; then
        awk -v a="$1" -v b="$2" -v c="$3" -v m="${4:- }" \
            'BEGIN { printf "%9.1f%s%-14s", b, m,
                            sprintf("(%.0f-%.0f)", a, c) }'
    else
        awk -v b="$2" -v m="${4:- }" 'BEGIN { printf "%9.1f%s", b, m }'
    fi
}

calc() {  # EXPR VAR=VALUE...: awk's value of EXPR
    local expr=$1 a=()
    shift
    for v in "$@"; do a+=(-v "$v"); done
    # parenthesized: a bare "print a > b" would write to a file named b
    awk "${a[@]}" "BEGIN { print ($expr) }"
}

report_begin
start_all=$SECONDS
echo "build: ${BENCH_BUILD:-in-tree}, UCX $("$PREFIX/bin/ucx_info" -v |
    sed -n 's/.*[Vv]ersion[=: ]*\([0-9][0-9.]*\).*/\1/p' | head -n 1)," \
     "copy transport $copy_tl; default UCX_TLS=$default_tls"
echo "regret = max(0, best forced / default - 1) of ucx_perftest's MB/s"
echo " (wall time; under a profile it includes the emulator's CPU copy, so"
echo " not bench/profile.sh's model time); noise = the default's second run"
echo " / its first - 1: a regret below the noise says nothing; $reps run(s)"
echo " per point (median), each ~${target} s for the default (probed), *:"
echo " stopped after $limit s, the figure of its last progress row; goals:"
echo " geomean <= 5%, worst size <= 15%; server and client pinned to CPUs" \
     "${cpus[*]:-(none)}"
echo "forced configurations:"
for i in "${!cfg_env[@]}"; do
    echo "  ${cfg_name[$i]}${cfg_test[$i]:+  (${cfg_test[$i]} only)}"
done
for s in "${skipped[@]}"; do echo "  skipped: $s"; done
echo "$runs_per_profile ucx_perftest runs per profile (fewer if some fail)," \
     "profiles: $profiles; load average before: $load_before"

summary=()
for profile in $profiles; do
    start=$SECONDS
    all_log=0 all_n=0 all_worst=-1 all_at=
    echo
    echo "== profile $profile"
    w=10
    [ "$reps" = 1 ] || w=24  # the median, then (min-max)
    printf "%-10s %-11s %-7s %-${w}s %7s %-${w}s %-28s %7s\n" test mem size \
        "  default" noise "     best" "best configuration" regret
    for test in $tests; do
        for mem in $mems; do
            sum_log=0 noise_log=0 n=0 nnoise=0 worst=-1 worst_at='' nfail=0
            for size in $sizes; do
                # the default first and last, the forced ones in between
                order=(default)
                for i in "${!cfg_env[@]}"; do
                    if applies "$i" "$test"; then order+=("$i"); fi
                done
                order+=(again)
                def=() again=() best=() best_cfg='' all=''
                # a probe of the default sets the iterations of every run
                # at this size: about $target s for the default
                run "$test" "$mem" "$size" "$profile" \
                    "$(iters_for "$size" "")" ""
                probe=
                if [[ $result == fail* ]]; then
                    echo "failed: $test $mem $(human "$size") probe:" \
                         "${result#fail }"
                else
                    probe=${result% stopped}
                fi
                iters=$(iters_for "$size" "$probe")
                [ -z "${FULL:-}" ] || all+=" probe=${probe:-failed} iters=$iters"
                for c in "${order[@]}"; do
                    name=$c forced=''
                    if [[ $c =~ ^[0-9]+$ ]]; then
                        name=${cfg_name[$c]} forced=${cfg_env[$c]}
                    fi
                    point "$test" "$mem" "$size" "$profile" "$iters" \
                        "$forced"
                    printf '.' >&2
                    if [[ $result == fail* ]]; then
                        echo "failed: $test $mem $(human "$size") $name:" \
                             "${result#fail }"
                        [ -z "${FULL:-}" ] || all+=" $name=failed"
                        continue
                    fi
                    read -ra r <<< "$result"
                    [ -z "${FULL:-}" ] || all+=" $name=${r[1]}${r[3]:-}"
                    case "$c" in
                    default) def=("${r[@]}") ;;
                    again) again=("${r[@]}") ;;
                    *)
                        if [ ${#best[@]} = 0 ] ||
                           [ "$(calc "${r[1]} > ${best[1]}")" = 1 ]; then
                            best=("${r[@]}") best_cfg=$name
                        fi ;;
                    esac
                done
                if [ ${#def[@]} = 0 ] || [ ${#best[@]} = 0 ]; then
                    nfail=$((nfail + 1))
                    printf '%-10s %-11s %-7s no regret: %s failed\n' "$test" \
                        "$mem" "$(human "$size")" \
                        "$([ ${#def[@]} = 0 ] && echo "the default" ||
                           echo "every forced configuration")"
                    continue
                fi
                noise=n/a
                if [ ${#again[@]} != 0 ]; then
                    noise=$(calc 'a / b - 1' a="${again[1]}" b="${def[1]}")
                    noise_log=$(calc 'l + log(1 + (x < 0 ? -x : x))' \
                                l="$noise_log" x="$noise")
                    nnoise=$((nnoise + 1))
                    noise=$(calc 'sprintf("%+.1f%%", x * 100)' x="$noise")
                fi
                regret=$(calc 'a / b - 1 > 0 ? a / b - 1 : 0' \
                         a="${best[1]}" b="${def[1]}")
                sum_log=$(calc 'l + log(1 + r)' l="$sum_log" r="$regret")
                n=$((n + 1))
                at="$(human "$size") ($best_cfg)"
                if [ "$(calc 'r > w' r="$regret" w="$worst")" = 1 ]; then
                    worst=$regret worst_at=$at
                fi
                if [ "$(calc 'r > w' r="$regret" w="$all_worst")" = 1 ]; then
                    all_worst=$regret all_at="$test $mem $at"
                fi
                printf '%-10s %-11s %-7s %s %7s %s %-28s %6.1f%%\n' "$test" \
                    "$mem" "$(human "$size")" "$(fmt3 "${def[@]}")" "$noise" \
                    "$(fmt3 "${best[@]}")" "$best_cfg" \
                    "$(calc 'r * 100' r="$regret")"
                [ -z "$all" ] || echo "    all MB/s:$all"
            done
            all_log=$(calc 'a + b' a="$all_log" b="$sum_log")
            all_n=$((all_n + n))
            if [ "$n" -gt 0 ]; then
                printf '%s %s: regret geomean %.1f%%, worst %.1f%% at %s;' \
                    "$test" "$mem" "$(calc '(exp(l / n) - 1) * 100' \
                                     l="$sum_log" n="$n")" \
                    "$(calc 'w * 100' w="$worst")" "$worst_at"
                noise=n/a
                if [ "$nnoise" != 0 ]; then
                    noise=$(calc 'sprintf("%.1f%%", (exp(l / n) - 1) * 100)' \
                            l="$noise_log" n="$nnoise")
                fi
                printf ' noise geomean %s%s\n' "$noise" \
                    "$([ "$nfail" = 0 ] || echo "; $nfail size(s) without a figure")"
            fi
            echo
        done
    done
    if [ "$all_n" = 0 ]; then
        s="profile $profile: no figure; $((SECONDS - start)) s"
    else
        s=$(printf 'profile %-10s regret geomean %.1f%% (goal <= 5%%), worst %.1f%% at %s (goal <= 15%%); %d s' \
            "$profile" "$(calc '(exp(l / n) - 1) * 100' l="$all_log" \
                          n="$all_n")" \
            "$(calc 'w * 100' w="$all_worst")" "$all_at" \
            $((SECONDS - start)))
    fi
    echo "$s"
    summary+=("$s")
    echo >&2
done
echo
echo "summary (${BENCH_BUILD:-in-tree}):"
printf '  %s\n' "${summary[@]}"
echo "elapsed: $((SECONDS - start_all)) s for $runs ucx_perftest runs" \
     "(2 processes each; $stopped stopped at $limit s); load average now:" \
     "$(cut -d' ' -f1 /proc/loadavg)"
report_end regret.sh
