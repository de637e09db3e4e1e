// The choice selector: decayed WAF per shadow copy, and the move with hysteresis.
#include "placement/selector.hpp"

#include <cmath>

namespace kvfdp::placement {

void ChoiceSelector::report(Choice c, uint64_t host_bytes, uint64_t media_bytes, bool failed)
{
	Copy &k = copies_[static_cast<unsigned>(c)];
	const double dh = static_cast<double>(host_bytes - k.host);
	const double dm = static_cast<double>(media_bytes - k.media);
	const double keep = cfg_.window_bytes > 0 ? std::exp(-dh / cfg_.window_bytes) : 0.0;
	k.dhost = keep * k.dhost + dh;
	k.dmedia = keep * k.dmedia + dm;
	k.host = host_bytes;
	k.media = media_bytes;
	k.failed = k.failed || failed;
}

double ChoiceSelector::waf(Choice c) const
{
	const Copy &k = copies_[static_cast<unsigned>(c)];
	if (k.failed || !(k.dhost > 0) || static_cast<double>(k.host) < cfg_.warmup_bytes)
		return 0;
	return k.dmedia / k.dhost;
}

Choice ChoiceSelector::pick()
{
	const double now = waf(current_);
	Choice best = current_;
	double best_waf = now;
	for (unsigned i = 0; i < kChoices; i++) {
		const auto c = static_cast<Choice>(i);
		const double w = waf(c);
		if (w > 0 && (best_waf <= 0 || w < best_waf)) {
			best = c;
			best_waf = w;
		}
	}
	// Move when the current copy is failed or warming up, or when another is lower by the
	// margin.
	if (best != current_ && (now <= 0 || best_waf < now - cfg_.margin)) {
		current_ = best;
		switches_++;
	}
	return current_;
}

}  // namespace kvfdp::placement
