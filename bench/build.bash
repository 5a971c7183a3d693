# Sourced by the bench/ scripts: the build they measure, and what they share.
#
# BENCH_BUILD, the build to measure: "in-tree" (default: UCX 1.13.1 + gaudi
# installed in PREFIX, default build/install) or "plugin" (UCX 1.22
# installed in PREFIX, default build/install-1.22, with the plugin's
# libraries from GAUDI_LIBDIR, default build/install-plugin-1.22/lib/ucx:
# contrib/build-plugin.sh). Needs $top and $work set.
#
#   copy_tl_name    the copy transport's name in this build
#   ratio A B       A / B, 3 decimals
#   results_section FILE SCRIPT BUILD REPORT   (below)
#   report_begin    what the script prints from here is also kept ...
#   report_end SCRIPT   ... and, with BENCH_RESULTS=FILE, replaces this
#                   build's section of FILE for SCRIPT

case "${BENCH_BUILD:-in-tree}" in
in-tree)
    PREFIX=${PREFIX:-$top/build/install}
    GAUDI_LIBDIR=${GAUDI_LIBDIR:-$PREFIX/lib/ucx} ;;
plugin)
    PREFIX=${PREFIX:-$top/build/install-1.22}
    GAUDI_LIBDIR=${GAUDI_LIBDIR:-$top/build/install-plugin-1.22/lib/ucx}
    # UCX loads the plugin from there (it is not in its own module dir)
    export UCX_PLUGIN_PATH=$GAUDI_LIBDIR ;;
*)
    echo "bench: BENCH_BUILD is in-tree or plugin" >&2; exit 2 ;;
esac

# the copy transport's name in this build (gaudi_copy; gaudi_cpy where
# UCX's transport names are shorter): the transport of the gaudi_cpy MD
copy_tl_name() {
    # awk reads to the end: an early exit would kill ucx_info with SIGPIPE,
    # which pipefail turns into a failure
    "$PREFIX/bin/ucx_info" -d | awk '/Memory domain: gaudi_cpy$/ { f = 1 }
                                   f && !done && /Transport:/ { print $3;
                                                               done = 1 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# results_section FILE SCRIPT BUILD REPORT: FILE's lines between the
# markers "<!-- bench/SCRIPT BUILD -->" and "<!-- end bench/SCRIPT BUILD -->"
# become the date, the machine and REPORT; the markers are appended when
# missing (the figures live in one place, and are regenerated, never copied
# by hand)
results_section() {
    local file=$1 script=$2 build=$3 report=$4 begin end body
    begin="<!-- bench/$script $build -->"
    end="<!-- end bench/$script $build -->"
    body=$work/section
    {
        echo "$begin"
        echo "\`bench/$script\` on the $build build, $(date -u +%Y-%m-%d)," \
             "$(nproc) cores, $(awk '/MemTotal/ { printf "%d GB", $2 / 1048576 }' \
                                  /proc/meminfo), $(. /etc/os-release &&
                                                    echo "$PRETTY_NAME"), emulated devices" \
             "(load average before the run: $load_before):"
        echo
        echo '```'
        cat "$report"
        echo '```'
        echo "$end"
    } > "$body"
    touch "$file"
    if grep -qxF "$begin" "$file"; then
        awk -v b="$begin" -v e="$end" -v f="$body" '
            $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
            $0 == e { skip = 0; next }
            !skip' "$file" > "$file.tmp"
    else
        { cat "$file"; echo; cat "$body"; } > "$file.tmp"
    fi
    mv "$file.tmp" "$file"
}

# the machine's load when the benchmark started, for results_section
load_before=$(cut -d' ' -f1 /proc/loadavg)

report_begin() {
    exec 3>&1 > >(tee "$work/report" >&3)
    report_pid=$!
}

report_end() {
    exec 1>&3 3>&-
    wait "$report_pid" 2> /dev/null || true
    if [ -n "${BENCH_RESULTS:-}" ]; then
        results_section "$BENCH_RESULTS" "$1" "${BENCH_BUILD:-in-tree}" \
            "$work/report"
        echo "bench: the ${BENCH_BUILD:-in-tree} section of $1 in" \
             "$BENCH_RESULTS replaced"
    fi
}
