#!/usr/bin/env bash
# OpenMM's compiled-kernel cache carried between device calls (gpu_suite.sh uses it):
#
#   bash benchmarks/kernel_cache.sh unpack CACHE_DIR PARTS_DIR STAMP
#       extracts PARTS_DIR/kernel-cache.part-* (xz or gzip, told by xz's magic number) into CACHE_DIR,
#       sets the access time of every module there to 1970 and writes the file STAMP (the parts'
#       bytes and the modules' count): from then on a module that OpenMM reads (or compiles) has an
#       access time later than STAMP's
#   bash benchmarks/kernel_cache.sh pack CACHE_DIR OUT_DIR STAMP [LIMIT]
#       writes CACHE_DIR as OUT_DIR/kernel-cache.part-* (15 MB each; xz where the machine has it, else
#       gzip), at most LIMIT bytes in all (default: KERNEL_CACHE_LIMIT, else 40,000,000): where all
#       modules make more, it keeps those read or compiled since STAMP first, then the others newest
#       first, as many as fit (as many as the carried parts' size a module says, then fewer in
#       proportion while the parts are too large). Prints one line: modules kept of all, how many
#       were used, bytes; exits 1 where even one module does not fit.
#
# Why a limit: a device call carries at most 64 MiB, .whl about 18 MB of it. Packed whole, the cache
# grew to 44 MB over a session (3,991 modules after the whole Python suite) and no longer fitted
# beside the wheels and the working tree. A module is about 200 kB, about 11 kB packed (xz with a
# 64 MiB dictionary: the modules share most of their text). Where the file system keeps no access
# times (noatime), no module counts as used and the newest are kept.
set -uo pipefail

parts_are_xz() {
    [ "$(head -c 6 "$1" | od -An -tx1 | tr -d ' \n')" = fd377a585a00 ]
}

unpack() {
    local cache=$1 parts=$2 stamp=$3
    mkdir -p "$cache"
    if ls "$parts"/kernel-cache.part-* > /dev/null 2>&1; then
        if parts_are_xz "$(ls "$parts"/kernel-cache.part-* | head -1)"; then
            cat "$parts"/kernel-cache.part-* | tar xJf - -C "$cache"
        else
            cat "$parts"/kernel-cache.part-* | tar xzf - -C "$cache"
        fi
    fi
    find "$cache" -type f -exec touch -a -d @0 {} +
    # The stamp holds the carried parts' bytes and modules: pack's first estimate of a module's size.
    echo "$(cat "$parts"/kernel-cache.part-* 2> /dev/null | wc -c) $(find "$cache" -type f | wc -l)" > "$stamp"
}

# Write the modules named in the file $3 (relative to $1) as $2/kernel-cache.part-*; print the bytes written.
write_parts() {
    local cache=$1 out=$2 names=$3
    rm -f "$out"/kernel-cache.part-*
    if command -v xz > /dev/null; then
        # A dictionary of 64 MiB spans many modules (they share most of their text): 8.7 MB for the
        # 1,117 modules where xz -6 (8 MiB) gave 15 MB; blocks of 64 MiB, compressed in parallel.
        tar cf - -C "$cache" -T "$names" | xz -T0 --block-size=64MiB --lzma2=preset=6,dict=64MiB | split -b 15000000 - "$out/kernel-cache.part-"
    else
        tar czf - -C "$cache" -T "$names" | split -b 15000000 - "$out/kernel-cache.part-"
    fi
    cat "$out"/kernel-cache.part-* | wc -c
}

pack() {
    local cache=$1 out=$2 stamp=$3 limit=${4:-${KERNEL_CACHE_LIMIT:-40000000}}
    if ! [[ "$limit" =~ ^[0-9]+$ ]] || [ "$limit" -lt 1000000 ]; then
        echo "kernel_cache.sh: the limit must be a number of bytes >= 1000000, not '$limit'" >&2
        return 2
    fi
    mkdir -p "$out"
    local names
    names=$(mktemp)
    # Used or compiled since the stamp first, then the others newest first.
    if [ -e "$stamp" ]; then
        (cd "$cache" && find . -type f -anewer "$stamp" -printf '%P\n' | sort) > "$names"
    else
        : > "$names"
    fi
    local used all
    used=$(wc -l < "$names")
    (cd "$cache" && find . -type f -printf '%T@ %P\n' | sort -rn | cut -d' ' -f2-) | grep -vxF -f "$names" > "$names.rest"
    cat "$names.rest" >> "$names"
    rm -f "$names.rest"
    all=$(wc -l < "$names")
    # As many as the carried parts' bytes a module say fit (a pass of xz less); all where nothing was carried.
    local keep=$all bytes carried=0 carriedModules=0
    [ -e "$stamp" ] && read -r carried carriedModules < "$stamp"
    if [ "${carried:-0}" -gt 0 ] && [ "${carriedModules:-0}" -gt 0 ] && [ $(( all*carried/carriedModules )) -gt "$limit" ]; then
        keep=$(( limit*carriedModules/carried*95/100 ))
        [ "$keep" -lt 1 ] && keep=1
    fi
    # Then fewer modules in proportion until the parts fit (a module packs to about the same size as another), five tries.
    for attempt in 1 2 3 4 5; do
        head -n "$keep" "$names" > "$names.kept"
        bytes=$(write_parts "$cache" "$out" "$names.kept")
        [ "$bytes" -le "$limit" ] || [ "$attempt" -eq 5 ] && break
        keep=$(( keep*limit/bytes*95/100 ))
        [ "$keep" -lt 1 ] && keep=1
    done
    rm -f "$names" "$names.kept"
    echo "kernel cache: $keep of $all modules kept ($used read or compiled in this call), $bytes bytes packed (limit $limit)"
    [ "$bytes" -le "$limit" ]
}

case "${1:-}" in
    unpack) [ $# -eq 4 ] || { echo "usage: $0 unpack CACHE_DIR PARTS_DIR STAMP" >&2; exit 2; }; unpack "$2" "$3" "$4" ;;
    pack) [ $# -ge 4 ] && [ $# -le 5 ] || { echo "usage: $0 pack CACHE_DIR OUT_DIR STAMP [LIMIT]" >&2; exit 2; }; pack "$2" "$3" "$4" "${5:-}" ;;
    *) echo "usage: $0 unpack CACHE_DIR PARTS_DIR STAMP | pack CACHE_DIR OUT_DIR STAMP [LIMIT]" >&2; exit 2 ;;
esac
