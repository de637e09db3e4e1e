// Placement of simulated writes, including the learner's death tracking per mapping unit.
#include "model/sim/placer.hpp"

#include <algorithm>
#include <cstdlib>

#include "placement/handle_map.hpp"

namespace kvfdp::sim {

Placer::Placer(Placement p, model::Ftl &ftl, const PlacerOptions &o)
    : p_(p), ftl_(ftl), nruh_(ftl.config().nruh),
      unit_lbas_(ftl.config().mapping_unit / ftl.config().lba_size),
      unit_bytes_(ftl.config().mapping_unit)
{
	if (p_ != Placement::learned)
		return;
	const model::ModelConfig &c = ftl.config();
	placement::LearnerConfig lc;
	lc.nruh = static_cast<uint16_t>(std::min<uint32_t>(nruh_, placement::kMaxHandles));
	lc.capacity_bytes = c.logical_bytes;
	lc.ru_bytes = c.ru_size;
	lc.op = c.op;
	lc.grouping = o.grouping;
	learner_ = std::make_unique<placement::Learner>(lc);
	if (o.shadows)
		init_shadows(lc);
	const uint64_t units = ftl.logical_lbas() / unit_lbas_ + 1;
	unit_key_.assign(units, 0);
	unit_birth_.assign(units, 0);
	recompute_bytes_ = o.recompute_bytes
				   ? o.recompute_bytes
				   : std::max<uint64_t>(4 * c.ru_size, c.logical_bytes / 64);
	next_recompute_ = recompute_bytes_;
}

Placer::~Placer() = default;

void Placer::init_shadows(const placement::LearnerConfig &lc)
{
	shadow_learner_ = std::make_unique<placement::Learner>(lc);
	for (auto &sh : shadows_)
		if (auto f = model::Ftl::create(ftl_.config()))
			sh = std::move(*f);
	placement::SelectorConfig sc;
	// Decided on the last capacity written, from two capacities on (after a fill and a first
	// turnover), moving only for 0.05 of WAF: a regroup's own mixing lasts long.
	sc.window_bytes = static_cast<double>(ftl_.config().logical_bytes);
	sc.warmup_bytes = 2.0 * sc.window_bytes;
	sc.margin = 0.05;
	selector_ = std::make_unique<placement::ChoiceSelector>(sc);
}

// The shadow copies: the learner's own grouping regroups in its copy; the choice whose copy
// writes least to the media is what the learner applies.
void Placer::select()
{
	if (shadows_[0] && !shadow_failed_[0]) {
		const auto sr = shadow_learner_->recompute(
			static_cast<double>(shadow_learner_->clock()) / (1u << 30));
		for (uint16_t h : sr.to_close())
			(void)shadows_[0]->ruh_update(h);
	}
	for (unsigned i = 0; i < shadows_.size(); i++) {
		if (!shadows_[i])
			continue;
		const model::Stats &st = shadows_[i]->stats();
		selector_->report(static_cast<placement::Choice>(i), st.host_bytes, st.media_bytes,
				  shadow_failed_[i]);
	}
	learner_->set_choice(selector_->pick());
}

uint32_t Placer::write(uint64_t slba, uint64_t nlb, uint8_t cls, uint64_t writer)
{
	switch (p_) {
	case Placement::none: return 0;
	case Placement::hint:
	case Placement::oracle:
		return placement::default_handle(cls, static_cast<uint16_t>(std::min<uint32_t>(
							      nruh_, placement::kMaxHandles)));
	case Placement::writer: return writer_handle(writer);
	case Placement::learned: break;
	}
	const placement::Key key{writer, cls};
	const uint64_t first = slba / unit_lbas_, last = (slba + nlb - 1) / unit_lbas_;
	died_units(first, last);  // overwritten
	const uint16_t h = learner_->place(key, nlb * ftl_.config().lba_size);
	// The key's index for the unit table; past 65535 keys the units go untracked (0).
	uint16_t idx = 0;
	auto it = key_index_.find(writer << 3 | (cls & 7));
	if (it != key_index_.end()) {
		idx = it->second;
	} else if (keys_.size() < 65535) {
		keys_.push_back(key);
		idx = static_cast<uint16_t>(keys_.size());
		key_index_.emplace(writer << 3 | (cls & 7), idx);
	}
	if (selector_)
		shadow_write(slba, nlb, cls, writer, key);
	const uint64_t now = learner_->clock();
	for (uint64_t u = first; u <= last && u < unit_key_.size(); u++) {
		unit_key_[u] = idx;
		unit_birth_[u] = now;
	}
	if (now >= next_recompute_) {
		next_recompute_ = now + recompute_bytes_;
		recompute();
	}
	return h;
}

uint32_t Placer::writer_handle(uint64_t writer)
{
	auto [it, fresh] =
		writer_index_.try_emplace(writer, static_cast<uint32_t>(writers_.size()));
	if (fresh)
		writers_.push_back(writer);
	return std::min<uint32_t>(it->second, nruh_ ? nruh_ - 1 : 0);
}

// The write into each shadow copy, placed by its choice; a copy that refuses one is failed.
void Placer::shadow_write(uint64_t slba, uint64_t nlb, uint8_t cls, uint64_t writer,
			  placement::Key key)
{
	const uint16_t nruh =
		static_cast<uint16_t>(std::min<uint32_t>(nruh_, placement::kMaxHandles));
	const uint32_t h[placement::ChoiceSelector::kChoices] = {
		shadow_learner_->place(key, nlb * ftl_.config().lba_size),
		placement::default_handle(cls, nruh),
		writer_handle(writer),
	};
	for (unsigned i = 0; i < shadows_.size(); i++)
		if (shadows_[i] && !shadow_failed_[i] && shadows_[i]->write(h[i], slba, nlb) != 0)
			shadow_failed_[i] = true;
}

void Placer::deallocate(uint64_t slba, uint64_t nlb)
{
	if (p_ != Placement::learned || nlb == 0)
		return;
	for (unsigned i = 0; i < shadows_.size() && selector_; i++)
		if (shadows_[i] && !shadow_failed_[i])
			(void)shadows_[i]->deallocate(slba, nlb);
	died_units(slba / unit_lbas_, (slba + nlb - 1) / unit_lbas_);
}

// Reports the live units in [first, last] as died now, runs of one key and birth at once.
void Placer::died_units(uint64_t first, uint64_t last)
{
	const uint64_t now = learner_->clock();
	uint16_t run_key = 0;
	uint64_t run_birth = 0, run_units = 0;
	auto flush = [&] {
		if (run_key && run_units) {
			learner_->died(keys_[run_key - 1], run_units * unit_bytes_,
				       now - run_birth);
			if (shadow_learner_)
				shadow_learner_->died(keys_[run_key - 1], run_units * unit_bytes_,
						      now - run_birth);
		}
		run_units = 0;
	};
	for (uint64_t u = first; u <= last && u < unit_key_.size(); u++) {
		const uint16_t k = unit_key_[u];
		if (k != run_key || unit_birth_[u] != run_birth) {
			flush();
			run_key = k;
			run_birth = unit_birth_[u];
		}
		if (k)
			run_units++;
		unit_key_[u] = 0;
	}
	flush();
}

void Placer::recompute()
{
	if (selector_)
		select();
	// The model's valid data, as a drive reports its namespace utilisation.
	learner_->set_device_valid(ftl_.live_units() * unit_bytes_);
	// The simulated time is the write clock at a nominal 1 GiB/s (for lifetime_s only).
	const auto r = learner_->recompute(static_cast<double>(learner_->clock()) / (1u << 30));
	recomputes_++;
	moved_keys_ += r.moved_keys;
	for (uint16_t h : r.to_close()) {  // as kvfdpd
		if (ftl_.ruh_update(h) == 0)
			ruh_updates_++;
		else
			ruh_update_errors_++;
	}
}

std::string Placer::describe_handle(uint32_t h) const
{
	std::string s;
	auto add = [&](const std::string &x) { s += (s.empty() ? "" : ",") + x; };
	switch (p_) {
	case Placement::none: return h == 0 ? "all" : "-";
	case Placement::hint:
	case Placement::oracle:
		for (uint8_t c = 0; c < placement::kNumClasses; c++)
			if (placement::default_handle(c, static_cast<uint16_t>(std::min<uint32_t>(
								 nruh_, placement::kMaxHandles))) ==
			    h)
				add(placement::class_name(c));
		break;
	case Placement::writer:
		for (size_t i = 0; i < writers_.size(); i++)
			if (std::min<size_t>(i, nruh_ ? nruh_ - 1 : 0) == h)
				add("w" + std::to_string(writers_[i]));
		break;
	case Placement::learned:
		for (const auto &k : learner_->groups())
			if (k.handle == h && k.written_bytes)
				add("w" + std::to_string(k.key.writer) + ":" +
				    placement::class_name(k.key.cls));
		break;
	}
	return s.empty() ? "-" : s;
}

nlohmann::json Placer::report() const
{
	nlohmann::json j = nlohmann::json::object();
	if (p_ == Placement::writer)
		j["writers"] = writers_.size();
	if (p_ != Placement::learned)
		return j;
	nlohmann::json keys = nlohmann::json::array();
	uint32_t groups = 0;
	std::vector<uint16_t> seen;
	for (const auto &k : learner_->groups()) {
		if (std::find(seen.begin(), seen.end(), k.handle) == seen.end() &&
		    k.written_bytes) {
			seen.push_back(k.handle);
			groups++;
		}
		keys.push_back({{"writer", k.key.writer},
				{"class", placement::class_name(k.key.cls)},
				{"handle", k.handle},
				{"lifetime_bytes", k.lifetime_bytes},
				{"write_share", k.write_share},
				{"live_bytes", k.live_bytes},
				{"written_bytes", k.written_bytes}});
	}
	j["learned"] = {{"groups", groups},
			{"recomputes", recomputes_},
			{"moved_keys", moved_keys_},
			{"ruh_updates", ruh_updates_},
			{"ruh_update_errors", ruh_update_errors_},
			{"key_count", learner_->key_count()},
			{"retired_keys", learner_->retired_keys()},
			{"overflow_bytes", learner_->overflow_bytes()},
			{"keys", keys}};
	if (selector_) {
		nlohmann::json shadows = nlohmann::json::object();
		for (unsigned i = 0; i < shadows_.size(); i++) {
			const auto c = static_cast<placement::Choice>(i);
			shadows[placement::choice_name(c)] = {{"waf", selector_->waf(c)},
							      {"failed", shadow_failed_[i]}};
		}
		j["learned"]["choice"] = placement::choice_name(selector_->current());
		j["learned"]["choice_switches"] = selector_->switches();
		j["learned"]["shadows"] = shadows;
	}
	return j;
}

}  // namespace kvfdp::sim
