# fill.sh -- sourced by the tests that fill the backing store part-way
# through a writer's chunks (test_fill.sh, test_drop_behind.sh): the writer
# and the check of what it was told was written.

# fill FILE [CHUNKS] -- the writer: CHUNKS (default 12) chunks of 1 MiB,
# each followed by fsync, until one fails; prints "acked N error ERRNO"
# (error 0: none, -1: a short write).
fill() {
	python3 - "$1" "${2:-12}" <<'PY'
import array, errno, os, sys
CH = 1 << 20
def pattern(k):
    # 8-byte words holding their own position in the file, from 1
    return array.array("Q", range(k * CH // 8 + 1, (k + 1) * CH // 8 + 1)).tobytes()
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
acked, err = 0, 0
for k in range(int(sys.argv[2])):
    try:
        n = os.pwrite(fd, pattern(k), k * CH)
        if n != CH:                 # a short write reaches the writer too
            err = -1
            break
        os.fsync(fd)
        acked = k + 1
    except OSError as e:
        err = e.errno
        break
try:
    os.close(fd)
except OSError:
    pass
print("acked %d error %d" % (acked, err))
PY
}

# verify FILE N -- the first N chunks of FILE (the backing file) hold the pattern.
verify() {
	python3 - "$1" "$2" <<'PY'
import array, sys
CH = 1 << 20
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "rb") as f:
    for k in range(n):
        got = f.read(CH)
        want = array.array("Q", range(k * CH // 8 + 1, (k + 1) * CH // 8 + 1)).tobytes()
        if got != want:
            bad = next((i for i in range(min(len(got), CH)) if got[i] != want[i]), len(got))
            sys.exit("chunk %d: fsync succeeded, yet the backing file differs from byte %d "
                     "(%d bytes read)" % (k, k * CH + bad, len(got)))
PY
}
