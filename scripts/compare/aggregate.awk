# Per-station min/mean/max of a measurements file: the classic one-pass
# awk script with associative arrays. Prints `name;min;mean;max` lines in
# no particular order (scripts/compare/check.py sorts before comparing).
BEGIN { FS = ";" }
{
    v = $2 + 0
    if ($1 in count) {
        if (v < lo[$1]) lo[$1] = v
        if (v > hi[$1]) hi[$1] = v
    } else {
        lo[$1] = v
        hi[$1] = v
    }
    sum[$1] += v
    count[$1]++
}
END {
    for (s in count) printf "%s;%.1f;%.4f;%.1f\n", s, lo[s], sum[s] / count[s], hi[s]
}
