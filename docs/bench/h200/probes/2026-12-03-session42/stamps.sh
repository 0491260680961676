# Session 42: sourced by calls 2 and 3 after common.sh: builds stamps_probe.cu against a stamped
# copy of the working tree's kernel and its "cheap" copy (make_stamped.py) in the background
# (stamps_build), runs both into $OUT/stamps.txt and $OUT/stamps_cheap.txt (stamps_run) and prints
# them side by side (stamps_show). prepare: the stamped probes, the copies old and n2 and every
# build of calls 2 and 3, then the stamps.
stamps_build() {
  local inc="-I$D/.. -I$PKG/include"
  python3 $D/make_stamped.py /tmp/st > /dev/null && python3 $D/make_stamped.py /tmp/stc cheap \
    > /dev/null || exit 1
  nvcc -arch=sm_90a -std=c++17 -O3 -I/tmp/st $inc $D/stamps_probe.cu -o /tmp/probe 2>&1 \
    | grep -i error &
  nvcc -arch=sm_90a -std=c++17 -O3 -I/tmp/stc $inc $D/stamps_probe.cu -o /tmp/probe_cheap 2>&1 \
    | grep -i error &
}
stamps_run() {
  timeout -s KILL 120 /tmp/probe > $OUT/stamps.txt
  timeout -s KILL 120 /tmp/probe_cheap > $OUT/stamps_cheap.txt
}
stamps_show() {
  paste -d'|' $OUT/stamps.txt $OUT/stamps_cheap.txt | cut -c1-150
}
prepare() {
  stamps_build
  copy_tree old || exit 1
  copy_tree n2 || exit 1
  build_all 12 /tmp/old:A /tmp/n2:N2
  stamps_run
}
