// The machine's fp32 peak, measured, for `kiln bench --profile`'s "% of peak".
#pragma once

namespace kiln::cli {

// GFLOP/s of one core running independent vector multiply-add chains (the widest vectors the
// CPU has: AVX-512, AVX2 + FMA, or scalar) for about `seconds`; a multiply-add counts 2.
double measure_fp32_peak_gflops(double seconds = 0.05);

}  // namespace kiln::cli
