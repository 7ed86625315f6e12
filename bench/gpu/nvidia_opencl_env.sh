# Sourced by the scripts that run on the lent GPU machine: that machine has no
# OpenCL ICD loader, so Debian's package (carried in .devcarry/) is unpacked
# into /tmp/ocl and pointed at NVIDIA's driver (libnvidia-opencl.so.1).
mkdir -p /tmp/ocl /tmp/icd
dpkg -x .devcarry/ocl-icd-libopencl1_*.deb /tmp/ocl
export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
