// Where `kvfdp simulate` puts each write: the default handle (none), the class map (hint,
// oracle), one handle per writer (writer), or the placement learner (learned), which also
// sees every death (overwrite, deallocate) with its age on the write clock and closes the
// handles it abandons with RUH Update. Experimental (PlacerOptions::shadows): learned also
// runs three shadow copies of the model, fed the same writes placed by the learner's own
// grouping, by class and by writer, and sets the learner's Choice to the one that writes
// least to the media (placement/selector.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/ftl/ftl.hpp"
#include "placement/learner.hpp"
#include "placement/selector.hpp"
#include "model/sim/workload.hpp"

namespace kvfdp::sim {

// The learner's settings in the simulator.
struct PlacerOptions {
	// Recompute every this many bytes written (0: max(4 RUs, capacity / 64)).
	uint64_t recompute_bytes = 0;
	// Its grouping rule (`kvfdp simulate --learned-grouping`, docs/placement.md "Grouping"):
	// order (kvfdpd's), lifetime (the ratio rule alone) or cost (by the projection of what
	// mixing costs; experimental).
	placement::Grouping grouping = placement::Grouping::order;
	// Shadow copies of the model choose between its grouping and the fixed policies'
	// (`--learned-shadows`; experimental: docs/placement.md "Choosing by shadow models").
	bool shadows = false;
};

class Placer {
public:
	Placer(Placement p, model::Ftl &ftl, const PlacerOptions &o = {});
	~Placer();
	Placer(const Placer &) = delete;
	Placer &operator=(const Placer &) = delete;

	// The handle for a write of [slba, slba + nlb) (model LBAs); learned also counts it,
	// ends the lifetimes of the units it overwrites, and every recompute_bytes regroups and
	// sends RUH Update to the model for each abandoned, remapped or idle handle.
	[[nodiscard]] uint32_t write(uint64_t slba, uint64_t nlb, uint8_t cls, uint64_t writer);
	// learned: the deallocated units' data died.
	void deallocate(uint64_t slba, uint64_t nlb);

	// What went where: "all", class names, writer ids, or learned keys ("w3:short").
	[[nodiscard]] std::string describe_handle(uint32_t h) const;
	// writer / learned figures for the run's JSON: ruh_updates, groups, keys.
	[[nodiscard]] nlohmann::json report() const;

private:
	void died_units(uint64_t first, uint64_t last);
	void recompute();
	void init_shadows(const placement::LearnerConfig &lc);
	void select();
	void shadow_write(uint64_t slba, uint64_t nlb, uint8_t cls, uint64_t writer,
			  placement::Key key);
	[[nodiscard]] uint32_t writer_handle(uint64_t writer);

	Placement p_;
	model::Ftl &ftl_;
	uint32_t nruh_;
	uint64_t unit_lbas_;
	uint64_t unit_bytes_;
	std::vector<uint64_t> writers_;  // writer placement: first-write order
	std::unordered_map<uint64_t, uint32_t> writer_index_;
	// learned
	std::unique_ptr<placement::Learner> learner_;
	std::vector<placement::Key> keys_;  // key index - 1 -> key (at most 65535 tracked)
	std::unordered_map<uint64_t, uint16_t> key_index_;  // writer << 3 | cls -> index
	std::vector<uint16_t> unit_key_;    // per mapping unit: key index + 1, 0 = no live data
	std::vector<uint64_t> unit_birth_;  // per mapping unit: learner clock when written
	uint64_t recompute_bytes_ = 0;
	uint64_t next_recompute_ = 0;
	uint64_t ruh_updates_ = 0;
	uint64_t ruh_update_errors_ = 0;
	uint64_t recomputes_ = 0;
	uint64_t moved_keys_ = 0;
	// learned: the shadow copies, by placement::Choice
	std::unique_ptr<placement::Learner> shadow_learner_;  // Choice::learned's placement
	std::array<std::unique_ptr<model::Ftl>, placement::ChoiceSelector::kChoices> shadows_;
	std::array<bool, placement::ChoiceSelector::kChoices> shadow_failed_{};
	std::unique_ptr<placement::ChoiceSelector> selector_;
};

}  // namespace kvfdp::sim
