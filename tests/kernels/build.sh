#!/usr/bin/env bash
# Rebuild the committed kernel images from their sources (nvcc 13.0 made them).
# The fatbins hold sm_90 SASS and compute_90 PTX; the cubin is sm_90; the PTX is
# compute_90 (PTX from nvcc 13 needs a CUDA 13 driver to JIT). kernels.fatbin uses
# nvcc's default compression (zstd PTX, plain SASS); the _lz4, _plain and _zstd
# (and _lz4_sass) variants cover the other fatbin encodings cudart.kernels reads.
set -euo pipefail
cd "$(dirname "$0")"
NVCC="${NVCC:-nvcc}"
GENCODE=(-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90)
for src in kernels occupancy cxx_kernels; do
    "$NVCC" -fatbin "${GENCODE[@]}" -o "$src.fatbin" "$src.cu"
    "$NVCC" -cubin -arch=sm_90 -o "$src.cubin" "$src.cu"
    "$NVCC" -ptx -arch=compute_90 -o "$src.ptx" "$src.cu"
done
"$NVCC" -fatbin "${GENCODE[@]}" --compress-mode=speed -o kernels_lz4.fatbin kernels.cu
"$NVCC" -fatbin "${GENCODE[@]}" --no-compress -o kernels_plain.fatbin kernels.cu
"$NVCC" -fatbin "${GENCODE[@]}" --compress-mode=size -o kernels_zstd.fatbin kernels.cu
# SASS only, LZ4 too (nvcc leaves SASS uncompressed unless told): the LZ4 cubin path.
"$NVCC" -fatbin -gencode arch=compute_90,code=sm_90 --compress-mode=speed -Xfatbin -compress-all \
    -o kernels_lz4_sass.fatbin kernels.cu
