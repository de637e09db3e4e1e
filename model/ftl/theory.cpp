// Lambert W0 by Halley iteration, and the greedy-GC WAF formula built on it.
#include "model/ftl/theory.hpp"

#include <cmath>
#include <limits>

namespace kvfdp::model {

double lambert_w0(double x)
{
	const double e_inv = std::exp(-1.0);
	if (std::isnan(x) || x < -e_inv)
		return std::numeric_limits<double>::quiet_NaN();
	if (x == -e_inv)
		return -1.0;
	// Start near the branch point with its series, elsewhere with log1p.
	double w;
	if (x < -0.3) {
		const double p = std::sqrt(2.0 * (std::exp(1.0) * x + 1.0));
		w = -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p;
	} else {
		w = std::log1p(x);
		if (x > 3)
			w -= std::log(w);
	}
	for (int i = 0; i < 64; i++) {
		const double ew = std::exp(w);
		const double f = w * ew - x;
		const double wp1 = w + 1.0;
		if (wp1 == 0)
			break;
		const double denom = ew * wp1 - (w + 2.0) * f / (2.0 * wp1);
		const double step = f / denom;
		w -= step;
		if (std::fabs(step) <= 1e-15 * (1.0 + std::fabs(w)))
			break;
	}
	return w;
}

double greedy_uniform_waf(double op)
{
	const double a = 1.0 + op;
	return a / (a + lambert_w0(-a * std::exp(-a)));
}

}  // namespace kvfdp::model
