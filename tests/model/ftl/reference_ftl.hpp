// A deliberately simple FTL (std::map / std::vector, linear scans) with the same policies as
// model::Ftl, for the randomized differential test. Slow; small configs only.
#pragma once

#include <cerrno>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "model/ftl/ftl.hpp"

namespace kvfdp::model::test {

class ReferenceFtl {
public:
	explicit ReferenceFtl(const ModelConfig &c) : c_(c)
	{
		lpu_ = c.mapping_unit / c.lba_size;
		upr_ = static_cast<uint32_t>(c.ru_size / c.mapping_unit);
		const long double phys = static_cast<long double>(c.logical_bytes) * (1.0L + c.op);
		per_rg_ = static_cast<uint32_t>(static_cast<uint64_t>(phys / c.ru_size) / c.nrg);
		low_ = c.gc_low ? c.gc_low : 2;
		high_ = c.gc_high ? c.gc_high : low_ + 1;
		rus_.resize(size_t{per_rg_} * c.nrg);
		free_.resize(c.nrg);
		for (uint32_t rg = 0; rg < c.nrg; rg++)
			for (uint32_t i = 0; i < per_rg_; i++)
				free_[rg].push_back(rg * per_rg_ + per_rg_ - 1 - i);
	}

	int write(uint32_t h, uint64_t slba, uint64_t nlb)
	{
		const uint64_t lbas = c_.logical_bytes / c_.lba_size;
		if (h >= uint32_t{c_.nrg} * c_.nruh || nlb == 0 || slba >= lbas ||
		    nlb > lbas - slba)
			return -EINVAL;
		stats.host_bytes += nlb * c_.lba_size;
		for (uint64_t lu = slba / lpu_; lu <= (slba + nlb - 1) / lpu_; lu++) {
			int r = program(h / c_.nruh, h % c_.nruh, lu);
			if (r)
				return r;
		}
		return 0;
	}

	int deallocate(uint64_t slba, uint64_t nlb)
	{
		const uint64_t lbas = c_.logical_bytes / c_.lba_size;
		if (nlb == 0 || slba >= lbas || nlb > lbas - slba)
			return -EINVAL;
		for (uint64_t lu = (slba + lpu_ - 1) / lpu_; lu < (slba + nlb) / lpu_; lu++) {
			auto it = l2p_.find(lu);
			if (it == l2p_.end())
				continue;
			drop(it->second);
			l2p_.erase(it);
			stats.deallocated_bytes += c_.mapping_unit;
		}
		return 0;
	}

	uint64_t ruamw(uint32_t h) const
	{
		auto it = open_.find({h / c_.nruh, h % c_.nruh});
		return uint64_t{it == open_.end() ? upr_ : upr_ - rus_[it->second].written} * lpu_;
	}
	uint64_t live_units() const { return l2p_.size(); }

	Stats stats;

private:
	enum { kFree, kOpen, kFull, kVictim };
	struct Ru {
		int state = kFree;
		std::map<uint32_t, uint64_t> live;  // slot -> logical unit
		uint32_t written = 0;
		uint32_t owner = 0xFFFF;
		uint64_t closed_at = 0;
		uint64_t touched = 0;  // greedy tie-break: most recently changed first
	};

	void drop(std::pair<uint32_t, uint32_t> loc)
	{
		Ru &ru = rus_[loc.first];
		ru.live.erase(loc.second);
		if (ru.state == kFull)
			ru.touched = ++seq_;
	}

	int program(uint32_t rg, uint32_t s, uint64_t lu)
	{
		auto it = open_.find({rg, s});
		if (it == open_.end()) {
			if (!in_gc_ && free_[rg].size() < low_)
				gc(rg);
			if (free_[rg].empty())
				return -ENOSPC;
			const uint32_t ru = free_[rg].back();
			free_[rg].pop_back();
			rus_[ru] = Ru{};
			rus_[ru].state = kOpen;
			rus_[ru].owner = s < c_.nruh ? s : s == c_.nruh ? 0xFFFF : s - c_.nruh - 1;
			it = open_.emplace(std::make_pair(rg, s), ru).first;
		}
		auto old = l2p_.find(lu);
		if (old != l2p_.end())
			drop(old->second);
		const uint32_t ru = it->second;
		Ru &r = rus_[ru];
		const uint32_t slot = r.written++;
		r.live[slot] = lu;
		l2p_[lu] = {ru, slot};
		stats.media_bytes += c_.mapping_unit;
		clock_++;
		if (r.written == upr_) {
			r.state = kFull;
			r.closed_at = clock_;
			r.touched = ++seq_;
			open_.erase(it);
		}
		return 0;
	}

	void gc(uint32_t rg)
	{
		in_gc_ = true;
		while (free_[rg].size() < high_) {
			uint32_t victim = 0xFFFFFFFF;
			double best = -1;
			for (uint32_t ru = rg * per_rg_; ru < (rg + 1) * per_rg_; ru++) {
				const Ru &r = rus_[ru];
				if (r.state != kFull || r.live.size() >= upr_)
					continue;
				if (c_.gc == GcPolicy::greedy) {
					if (victim == 0xFFFFFFFF ||
					    r.live.size() < rus_[victim].live.size() ||
					    (r.live.size() == rus_[victim].live.size() &&
					     r.touched > rus_[victim].touched))
						victim = ru;
				} else {
					const double u = static_cast<double>(r.live.size()) / upr_;
					const double age =
						static_cast<double>(clock_ - r.closed_at) + 1.0;
					const double score = (1.0 - u) * age / (1.0 + u);
					if (score > best) {
						best = score;
						victim = ru;
					}
				}
			}
			if (victim == 0xFFFFFFFF)
				break;
			Ru &v = rus_[victim];
			const bool persistent =
				v.owner != 0xFFFF && !c_.ruh_types.empty() &&
				c_.ruh_types[v.owner] == HandleType::persistently_isolated;
			const uint32_t dest = persistent ? c_.nruh + 1 + v.owner : c_.nruh;
			auto d = open_.find({rg, dest});
			const uint32_t room = d == open_.end() ? 0 : upr_ - rus_[d->second].written;
			if (v.live.size() > room && free_[rg].empty())
				break;
			v.state = kVictim;
			const std::map<uint32_t, uint64_t> live = v.live;
			for (const auto &[slot, lu] : live)
				(void)program(rg, dest, lu);
			stats.relocated_bytes += live.size() * c_.mapping_unit;
			stats.erased_bytes += c_.ru_size;
			stats.gc_runs++;
			v = Ru{};
			free_[rg].push_back(victim);
		}
		in_gc_ = false;
	}

	ModelConfig c_;
	uint32_t lpu_ = 0, upr_ = 0, per_rg_ = 0, low_ = 0, high_ = 0;
	bool in_gc_ = false;
	uint64_t clock_ = 0, seq_ = 0;
	std::map<uint64_t, std::pair<uint32_t, uint32_t>> l2p_;
	std::vector<Ru> rus_;
	std::vector<std::vector<uint32_t>> free_;
	std::map<std::pair<uint32_t, uint32_t>, uint32_t> open_;
};

}  // namespace kvfdp::model::test
