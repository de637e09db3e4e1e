// TwinModels: records -> the kept regions' pieces -> both sampled models.
#include "model/twin/models.hpp"

#include <algorithm>

namespace kvfdp::twin {

Result<std::unique_ptr<TwinModels>> TwinModels::create(const TwinPlan &plan)
{
	auto placed = model::Ftl::create(plan.model);
	if (!placed)
		return std::move(placed).error();
	auto none = model::Ftl::create(plan.model);
	if (!none)
		return std::move(none).error();
	return std::unique_ptr<TwinModels>(
		new TwinModels(plan, std::move(*placed), std::move(*none)));
}

TwinModels::TwinModels(const TwinPlan &plan, std::unique_ptr<model::Ftl> placed,
		       std::unique_ptr<model::Ftl> none)
    : plan_(plan), sampler_(plan.regions, plan.kept), placed_(std::move(placed)),
      none_(std::move(none))
{
}

void TwinModels::apply_piece(const Record &r, uint64_t mlba, uint64_t n) noexcept
{
	if (mlba + n > placed_->logical_lbas())
		n = mlba < placed_->logical_lbas() ? placed_->logical_lbas() - mlba
						   : 0;  // the tail past whole units
	if (!n)
		return;
	if (window_)
		note_piece(r, mlba, n);
	if (r.op == Op::write) {
		const uint32_t h = r.handle < placed_->handles() ? r.handle : 0;
		errors_ += placed_->write(h, mlba, n) != 0;
		errors_ += none_->write(0, mlba, n) != 0;
	} else {
		errors_ += placed_->deallocate(mlba, n) != 0;
		errors_ += none_->deallocate(mlba, n) != 0;
	}
}

void TwinModels::note_piece(const Record &r, uint64_t mlba, uint64_t n) noexcept
{
	const uint16_t h = r.op == Op::write ? r.handle : 0;
	if (pend_.nlb && pend_.op == r.op && pend_.handle == h && pend_.slba + pend_.nlb == mlba &&
	    pend_.nlb + n <= UINT32_MAX) {
		pend_.nlb += static_cast<uint32_t>(n);
		return;
	}
	flush_piece();
	while (n > UINT32_MAX) {  // a trim of more than 2^32 LBAs at rate 1
		window_->push(Record{mlba, UINT32_MAX, h, r.op, 0}, now_ms_);
		mlba += UINT32_MAX;
		n -= UINT32_MAX;
	}
	pend_ = Record{mlba, static_cast<uint32_t>(n), h, r.op, 0};
}

void TwinModels::flush_piece() noexcept
{
	if (pend_.nlb)
		window_->push(pend_, now_ms_);
	pend_.nlb = 0;
}

void TwinModels::apply(const Record &r) noexcept
{
	records_++;
	apply_pieces(r);
	if (window_)
		flush_piece();  // the record's last piece
}

void TwinModels::apply_pieces(const Record &r) noexcept
{
	const uint64_t rl = plan_.region_lbas;
	const uint64_t end = r.slba + r.nlb;
	if (sampler_.identity()) {  // rate 1: the record, up to the kept regions' end, is one piece
		const uint64_t hi = std::min(end, sampler_.kept() * rl);
		if (r.slba < hi)
			apply_piece(r, r.slba, hi - r.slba);
		return;
	}
	const uint64_t first = r.slba / rl, last = (end + rl - 1) / rl;  // regions [first, last)
	if (r.op != Op::write && last - first > sampler_.kept()) {
		// A trim of more regions than are kept: walk the kept ones instead.
		for (uint64_t s = 0; s < sampler_.kept(); s++) {
			const uint64_t reg = sampler_.region_of(s);
			if (reg < first || reg >= last)
				continue;
			const uint64_t lo = std::max(r.slba, reg * rl),
				       hi = std::min(end, (reg + 1) * rl);
			apply_piece(r, s * rl + (lo - reg * rl), hi - lo);
		}
		return;
	}
	// Pieces that follow each other in the model's LBAs (every one at rate 1) go to the models
	// as one range: the same units in the same order, one call per model instead of one each.
	uint64_t pm = 0, pn = 0;
	for (uint64_t lba = r.slba; lba < end;) {
		const uint64_t reg = lba / rl;
		const uint64_t hi = std::min(end, (reg + 1) * rl);
		const uint64_t s = sampler_.slot(reg);
		if (s != RegionSampler::kNotKept) {
			const uint64_t m = s * rl + (lba - reg * rl);
			if (pn && pm + pn == m) {
				pn += hi - lba;
			} else {
				if (pn)
					apply_piece(r, pm, pn);
				pm = m;
				pn = hi - lba;
			}
		}
		lba = hi;
	}
	if (pn)
		apply_piece(r, pm, pn);
}

TwinReport TwinModels::report() const
{
	TwinReport t;
	const model::Stats &p = placed_->stats(), &n = none_->stats();
	t.rate = plan_.rate;
	t.region_bytes = plan_.region_lbas * plan_.model.lba_size;
	t.model_logical_bytes = plan_.model.logical_bytes;
	t.model_ru_bytes = plan_.model.ru_size;
	t.records = records_;
	t.model_errors = errors_;
	auto scale = [&](uint64_t b) {
		return static_cast<uint64_t>(static_cast<double>(b) / plan_.rate);
	};
	t.host_bytes = scale(p.host_bytes);
	t.media_bytes_placed = scale(p.media_bytes);
	t.media_bytes_none = scale(n.media_bytes);
	t.relocated_bytes_placed = scale(p.relocated_bytes);
	t.relocated_bytes_none = scale(n.relocated_bytes);
	t.waf_placed = p.waf();
	t.waf_none = n.waf();
	t.saved_bytes = static_cast<int64_t>(t.media_bytes_none) -
			static_cast<int64_t>(t.media_bytes_placed);
	t.handles_placed.resize(placed_->handles());
	for (uint32_t h = 0; h < placed_->handles(); h++) {
		const model::HandleStats &hs = placed_->handle_stats(h);
		t.handles_placed[h] = {scale(hs.host_bytes), scale(hs.relocated_bytes)};
	}
	return t;
}

}  // namespace kvfdp::twin
