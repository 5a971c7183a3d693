# How a gtest program's results are counted and what a failed test suite
# prints, shared by test/run-tests.sh and contrib/valgrind.sh (so that the
# two count alike): the test command's own output must explain every
# failure, since CI keeps only what was printed (the logs under /tmp go with
# the fresh root they ran in). Sourced; prints to stdout, each line
# indented by four spaces.

# report_gtest LOG: for each test that failed in a gtest program's LOG, its
# assertion lines (from gtest's first "...: Failure" line of the test on,
# at most 40 lines), or the last lines of its output when it has none; and a
# test that was still running when the program ended (a crash) with its
# last lines. Prints nothing when nothing failed.
report_gtest() {
    awk '
    function flush_ring(   i, n0) {
        n0 = (ring_n > RING) ? ring_n - RING : 0
        for (i = n0; i < ring_n; ++i) print "    | " ring[i % RING]
    }
    function show(name, how) {
        print "    --- " name ": " how
        if (cap_n > 0) {
            for (i = 0; i < cap_n; ++i) print "    | " cap[i]
            if (cap_more) print "    | (" cap_more " more lines in the log)"
        } else {
            flush_ring()
        }
    }
    BEGIN { RING = 20; MAX = 40 }
    /^\[ RUN      \] / {
        test = $4; ring_n = 0; cap_n = 0; cap_more = 0; next
    }
    test == "" { next }
    /^\[       OK \] / || /^\[  SKIPPED \] / { test = ""; next }
    /^\[  FAILED  \] / {
        name = $4; sub(/,$/, "", name)   # ", where GetParam() = ..."
        if (name == test) { show(test, "failed"); test = ""; next }
    }
    {
        ring[ring_n++ % RING] = $0
        if (cap_n == 0 && $0 !~ /: Failure$/) next
        if (cap_n < MAX) cap[cap_n++] = $0; else cap_more++
    }
    END {
        if (test != "") show(test, "still running when the program ended " \
                                   "(a crash?)")
    }' "$1"
}

# report_gtest_failed LOG: the names of the tests that failed, or was running
# when the program ended, one per line (for a --gtest_filter)
report_gtest_failed() {
    awk '
    /^\[ RUN      \] / { test = $4; next }
    /^\[       OK \] / || /^\[  SKIPPED \] / { test = ""; next }
    /^\[  FAILED  \] / {
        name = $4; sub(/,$/, "", name)
        if (name == test) { print test; test = ""; next }
    }
    END { if (test != "") print test }' "$1" | sort -u
}

# report_gtest_counts NAME LOG RC [RC_OK]: how many tests of the gtest
# program NAME passed, failed and were skipped, from its LOG and its exit
# status RC, into the caller's variables p, f and s (the two scripts count
# alike); and, printed, why it failed. An exit status other than 0 (and
# RC_OK: valgrind's, whose errors the caller counts itself) with no failed
# test reported counts as 1 failure (a crash), as does a program that ran no
# test. Lists the failed tests with their assertions (report_gtest) and says
# how many were skipped, adding "NAME(N)" to the caller's array skipped:
# gtest's PASSED count leaves them out, and a suite that skips itself (not
# root, say) must be seen.
report_gtest_counts() {
    local name=$1 log=$2 rc=$3 rc_ok=${4:-0}
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*listed below.*/\1/p' "$log" |
        tail -n 1)
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    p=${p:-0}; f=${f:-0}; s=${s:-0}
    if [ "$rc" -ne 0 ] && [ "$rc" -ne "$rc_ok" ] && [ "$f" -eq 0 ]; then
        echo "    $name exited with $rc before reporting (crash?): counted" \
             "as 1 failure"
        # the test it was running, if any, is shown by report_gtest below
        [ -n "$(report_gtest_failed "$log")" ] ||
            tail -n 20 "$log" | sed 's/^/    | /'
        f=1
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
        echo "    $name ran no test: counted as 1 failure"
        f=1
    fi
    grep -E '^\[  FAILED  \] [a-zA-Z]' "$log" | sort -u | sed 's/^/    /'
    [ "$f" -eq 0 ] || report_gtest "$log"
    if [ "$s" -gt 0 ]; then
        echo "    $s skipped, not counted as passed"
        skipped+=("$name($s)")
    fi
}

# report_gtest_args LOG ARGS...: the gtest program's arguments ARGS to run
# just the tests that failed in its LOG again, into the caller's array args:
# its --gtest_filter replaced by those tests; ARGS as they are when LOG
# names none (only memcheck complained, say)
report_gtest_args() {
    local log=$1 tests a
    shift
    tests=$(report_gtest_failed "$log" | paste -sd:)
    args=()
    for a in "$@"; do
        [ -n "$tests" ] && [[ $a == --gtest_filter=* ]] || args+=("$a")
    done
    [ -z "$tests" ] || args+=(--gtest_filter="$tests")
}

# report_replay [ENV...] -- COMMAND...: "replay: <the command>", shell-quoted,
# to copy and paste: a fresh emulator state directory instead of the one of
# the run (UCX_GAUDI_EMU_STATE_DIR=$(mktemp -d)), UCX_PLUGIN_PATH when set
report_replay() {
    local line="" a
    while [ "$1" != "--" ]; do
        if [[ $1 == UCX_GAUDI_EMU_STATE_DIR=* ]]; then
            line+='UCX_GAUDI_EMU_STATE_DIR=$(mktemp -d) '
        else
            line+="$(printf '%q' "$1") "
        fi
        shift
    done
    shift
    if [ -n "${UCX_PLUGIN_PATH:-}" ]; then
        line="UCX_PLUGIN_PATH=$(printf '%q' "$UCX_PLUGIN_PATH") $line"
    fi
    for a in "$@"; do
        line+="$(printf '%q' "$a") "
    done
    echo "    replay: ${line% }"
}

# report_script LOG: the end of a failed script's output: its last 40
# lines, or from its first line that starts with FAIL on if that is earlier
# (a script that reports several failures, e.g. the fault matrix, prints
# their details there); at most 200 lines, and then every FAIL line before
# them first
report_script() {
    local log=$1 n first start max=200
    n=$(wc -l < "$log")
    first=$(grep -n -m1 '^FAIL' "$log" | cut -d: -f1)
    start=$((n > 40 ? n - 39 : 1))
    if [ -n "$first" ] && [ "$first" -lt "$start" ]; then
        start=$first
    fi
    if [ $((n - start + 1)) -gt "$max" ]; then
        start=$((n - max + 1))
        head -n $((start - 1)) "$log" | grep -n '^FAIL' |
            sed 's/^\([0-9]*\):/    | (line \1) /'
    fi
    [ "$start" -le 1 ] || echo "    | ... lines $start-$n of $n:"
    tail -n +"$start" "$log" | sed 's/^/    | /'
}
