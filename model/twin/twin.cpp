// Twin: the rings, the thread that drains them, and the report.
#include "model/twin/twin.hpp"

#include <chrono>

#include "common/log.hpp"

namespace kvfdp::twin {

namespace {

// Records taken from a ring per pass (a fixed buffer on the twin thread's stack).
constexpr uint32_t kBatch = 256;
}  // namespace

Result<std::unique_ptr<Twin>> Twin::create(const TwinOptions &o)
{
	auto plan = plan_twin(o.geometry, o.memory_bytes, o.bound_name);
	if (!plan)
		return std::move(plan).error();
	auto models = TwinModels::create(*plan);
	if (!models)
		return std::move(models).error();
	return std::unique_ptr<Twin>(new Twin(std::move(*models), o, plan->window_records));
}

Twin::Twin(std::unique_ptr<TwinModels> m, const TwinOptions &o, uint64_t window_records)
    : models_(std::move(m)), window_(window_records), born_(std::chrono::steady_clock::now()),
      ring_records_(o.ring_records), idle_wait_(o.idle_wait)
{
	models_->set_window(&window_);
}

uint32_t Twin::now_ms() const
{
	const auto d = std::chrono::steady_clock::now() - born_;
	return static_cast<uint32_t>(
		std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

Twin::~Twin()
{
	stop();
}

void Twin::add_rings(uint16_t n)
{
	std::lock_guard<std::mutex> lk(mu_);
	while (rings_.size() < n)
		rings_.push_back(std::make_unique<Ring>(ring_records_, &wake_));
}

uint64_t Twin::drain()
{
	Record batch[kBatch];
	uint64_t total = 0;
	std::lock_guard<std::mutex> lk(mu_);
	models_->set_now_ms(now_ms());  // one clock read per pass, not per record
	for (auto &ring : rings_) {
		uint32_t n;
		while ((n = ring->pop(batch, kBatch)) > 0) {
			for (uint32_t i = 0; i < n; i++)
				models_->apply(batch[i]);
			total += n;
		}
	}
	return total;
}

void Twin::run()
{
	for (;;) {
		// Read before the drain: a ring's signal after this point ends the wait at once.
		const uint32_t seen = wake_.generation();
		if (stop_.load())
			break;
		drain();
		sleeps_.fetch_add(1, std::memory_order_release);
		wake_.wait(seen, idle_wait_);
	}
	drain();
}

void Twin::start()
{
	if (thread_.joinable())
		return;
	stop_.store(false);
	thread_ = std::thread([this] { run(); });
}

void Twin::stop()
{
	if (!thread_.joinable())
		return;
	stop_.store(true);
	wake_.signal();
	thread_.join();
}

TwinReport Twin::report()
{
	drain();
	TwinReport t;
	{
		std::lock_guard<std::mutex> lk(mu_);
		t = models_->report();
	}
	t.memory_bytes = models_->placed().memory_bytes() + models_->none().memory_bytes() +
			 window_.memory_bytes();
	for (const auto &r : rings_) {
		t.dropped += r->dropped();
		t.memory_bytes += r->memory_bytes();
	}
	return t;
}

proto::TwinWindow Twin::window(uint64_t from, uint64_t max)
{
	drain();
	const TwinPlan &p = models_->plan();
	proto::TwinWindow w;
	w.rate = p.rate;
	w.model = {p.model.logical_bytes,
		   p.model.ru_size,
		   p.model.lba_size,
		   p.model.mapping_unit,
		   p.model.nruh,
		   p.model.op,
		   model::gc_policy_name(p.model.gc)};
	for (const auto &r : rings_)
		w.dropped += r->dropped();
	std::lock_guard<std::mutex> lk(mu_);
	window_.fill(w, now_ms(), from, max);
	return w;
}

Result<std::unique_ptr<Twin>> twin_for(const nvme::DeviceInfo &info, uint16_t nruh, double model_op,
				       const TwinSettings &s)
{
	if (!s.memory_bytes || !info.fdp_enabled || nruh == 0)
		return std::unique_ptr<Twin>();
	TwinOptions o;
	o.geometry = TwinGeometry{info.nlb, info.lba_size, info.ru_size, nruh,
				  s.op > 0       ? s.op
				  : model_op > 0 ? model_op
						 : 0.07};
	o.memory_bytes = s.memory_bytes;
	if (!s.memory_from.empty())
		o.bound_name = "twin_memory";
	auto t = Twin::create(o);
	if (!t) {
		if (!s.memory_from.empty())  // a config key: the line says where it is
			return guidance_error(std::errc::invalid_argument,
					      s.memory_from + ": " + t.error().message());
		if (s.memory_given)
			return std::move(t).error();
		log::warn("%s (running without the twin)", t.error().message().c_str());
		return std::unique_ptr<Twin>();
	}
	const TwinPlan &p = (*t)->plan();
	log::debug(
		log::kCatModel,
		"twin: rate %.6f of %llu MiB, RUs of %llu KiB (%u mapping units), %.1f MiB for both models, OP %.3f",
		p.rate, static_cast<unsigned long long>(p.model.logical_bytes >> 20),
		static_cast<unsigned long long>(p.model.ru_size >> 10), p.sampled_ru_units,
		static_cast<double>(p.memory_bytes) / (1 << 20), p.model.op);
	(*t)->start();
	return t;
}

}  // namespace kvfdp::twin
