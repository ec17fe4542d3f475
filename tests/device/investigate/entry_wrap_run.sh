set -u
c=$PWD/.device-carry; export LD_LIBRARY_PATH=$c; o=$OUT/wrap; mkdir -p $o
W=$c/libgpupart-investigate-wrap.so
{
echo "== bare"; $c/gpupart-dev-stream-smid
echo "== wrapped, TPCs 0-3 allowed"; GPUPART_WRAP_COUNT=1 GPUPART_WRAP_ALLOWED=0xf LD_PRELOAD=$W $c/gpupart-dev-stream-smid
echo "== wrapped, TPCs 8-15 allowed, then 32-63 from the created stream's 2nd launch"; GPUPART_WRAP_COUNT=1 GPUPART_WRAP_SWITCH_AT=2 GPUPART_WRAP_ALLOWED2=0xffffffff00000000 GPUPART_WRAP_ALLOWED=0xff00 LD_PRELOAD=$W $c/gpupart-dev-stream-smid
echo "== counts under the threads bench"; GPUPART_WRAP_COUNT=1 GPUPART_WRAP_ALLOWED=0xf LD_PRELOAD=$W $c/gpupart-bench-threads --threads 2 --stream per-thread --ms 200
} > $o/smid.txt 2>&1
for rep in 1 2 3; do for th in 1 8 16; do for mode in bare wrap-all wrap-half; do
  case $mode in
    bare) r=$($c/gpupart-bench-threads --threads $th --stream own --ms 700) ;;
    wrap-all) r=$(GPUPART_WRAP_ALLOWED=0xffffffffffffffff LD_PRELOAD=$W $c/gpupart-bench-threads --threads $th --stream own --ms 700 2>/dev/null) ;;
    wrap-half) r=$(GPUPART_WRAP_ALLOWED=0xffffffff LD_PRELOAD=$W $c/gpupart-bench-threads --threads $th --stream own --ms 700 2>/dev/null) ;;
  esac
  echo "$mode $r"
done; done; done > $o/rates.txt
cat $o/smid.txt
python3 - $o/rates.txt <<'PY'
import sys, statistics, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split(); f = dict(zip(p[1::2], p[2::2])); v[(int(f["threads"]), p[0])].append(float(f["launches_per_s"]))
for th in (1, 8, 16):
    b = statistics.median(v[(th, "bare")])
    print(th, "threads: bare %.0f" % b, " ".join("%s %.0f (%.2fx)" % (m, statistics.median(v[(th, m)]), statistics.median(v[(th, m)]) / b) for m in ("wrap-all", "wrap-half")))
PY
