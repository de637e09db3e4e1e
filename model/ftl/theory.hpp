// Analytic write amplification of greedy GC under uniform random writes (Xiang & Kurkoski).
#pragma once

namespace kvfdp::model {

// Principal branch W0 of the Lambert W function (w e^w = x) for x >= -1/e, by Halley
// iteration to double precision. Returns NaN for x < -1/e.
[[nodiscard]] double lambert_w0(double x);

// WA = alpha / (alpha + W0(-alpha e^-alpha)) with alpha = 1 + op, op = (physical - logical)
// / logical: 2.48 at 0.28, 7.82 at 0.07 (the large-device limit).
[[nodiscard]] double greedy_uniform_waf(double op);

}  // namespace kvfdp::model
