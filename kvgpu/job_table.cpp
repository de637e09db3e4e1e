// JobTable: tickets and their job slots, batches, and the queue the worker takes jobs from.
#include "kvgpu/job_table.hpp"

namespace kvfdp::gpu {

void JobTable::init(unsigned max_jobs)
{
	max_jobs_ = max_jobs;
	batches_ = std::vector<Batch>(max_jobs);
	jobs_ = std::vector<Job>(max_jobs);
	pending_.reserve(max_jobs);
}

int JobTable::reserve(Kind kind, unsigned *idx, int64_t *ticket, bool tracked)
{
	std::unique_lock lock(mu_);
	if (stop_)
		return KVGPU_ERR_INVAL;
	int64_t t = next_ticket_++;
	unsigned i = static_cast<unsigned>(t % max_jobs_);
	// Tickets map to job slots round-robin; ticket t may reuse the slot once t - max_jobs is done.
	cv_.wait(lock, [&] {
		const Job &j = jobs_[i];
		if (t <= int64_t(max_jobs_))
			return j.state == JobState::free;
		return j.state == JobState::done && j.ticket == t - int64_t(max_jobs_);
	});
	Job &j = jobs_[i];
	if (j.state == JobState::done && !j.waited && j.result < 0)
		unwaited_error_ = j.result;
	j.ticket = t;
	j.state = JobState::reserved;
	j.result = 0;
	j.waited = !tracked;
	j.kind = kind;
	j.pslot = j.pentry = j.batch = -1;
	j.batch_pos = 0;
	j.reserved = 0;
	j.store_seq = 0;
	j.key_len = 0;
	*idx = i;
	*ticket = t;
	return 0;
}

void JobTable::publish(unsigned idx)
{
	std::lock_guard lock(mu_);
	jobs_[idx].state = JobState::queued;
	pending_.push_back(idx);
	has_pending_.store(true, std::memory_order_release);
}

void JobTable::release_reserved(unsigned idx)
{
	std::lock_guard lock(mu_);
	jobs_[idx].state = JobState::done;
	jobs_[idx].waited = true;
	jobs_[idx].result = KVGPU_ERR_CUDA;
	cv_.notify_all();
}

int JobTable::wait(int64_t ticket)
{
	std::unique_lock lock(mu_);
	if (ticket < 0 || ticket >= next_ticket_)
		return KVGPU_ERR_TICKET;
	if (ticket == 0) {
		int64_t upto = next_ticket_;
		cv_.wait(lock, [&] {
			for (const Job &j : jobs_)
				if (j.ticket < upto && j.state != JobState::free &&
				    j.state != JobState::done)
					return false;
			return true;
		});
		int err = unwaited_error_;
		unwaited_error_ = 0;
		for (Job &j : jobs_) {
			if (j.ticket < upto && j.state == JobState::done && !j.waited) {
				j.waited = true;
				if (j.result < 0)
					err = j.result;
			}
		}
		return err;
	}
	Job &j = jobs_[static_cast<size_t>(ticket % max_jobs_)];
	cv_.wait(lock, [&] {
		return j.ticket > ticket || (j.ticket == ticket && j.state == JobState::done);
	});
	if (j.ticket != ticket)
		return KVGPU_ERR_EXPIRED;
	j.waited = true;
	return j.result;
}

int JobTable::begin_batch(int64_t *results, int64_t *bt, int *b)
{
	std::unique_lock lock(mu_);
	if (stop_)
		return KVGPU_ERR_INVAL;
	*bt = next_batch_++;
	*b = static_cast<int>(*bt % int64_t(batches_.size()));
	// A batch slot is reused once its previous batch is done (its results are in place).
	cv_.wait(lock, [&] { return batches_[size_t(*b)].remaining == 0; });
	Batch &bb = batches_[size_t(*b)];
	bb.ticket = *bt;
	bb.remaining = 1;  // held until every load is queued
	bb.first_err = 0;
	bb.results = results;
	return 0;
}

void JobTable::batch_enter(int b)
{
	std::lock_guard lock(mu_);
	batches_[size_t(b)].remaining++;
}

void JobTable::batch_leave(int b)
{
	std::lock_guard lock(mu_);
	batches_[size_t(b)].remaining--;
}

void JobTable::batch_fail(int b, size_t i, int rc)
{
	std::lock_guard lock(mu_);
	batches_[size_t(b)].results[i] = rc;
	if (batches_[size_t(b)].first_err == 0)
		batches_[size_t(b)].first_err = rc;
}

void JobTable::batch_close(int b)
{
	std::lock_guard lock(mu_);
	if (--batches_[size_t(b)].remaining == 0)
		cv_.notify_all();
}

int JobTable::batch_wait(int64_t bt)
{
	std::unique_lock lock(mu_);
	if (bt <= 0 || bt >= next_batch_)
		return KVGPU_ERR_TICKET;
	Batch &b = batches_[size_t(bt % int64_t(batches_.size()))];
	cv_.wait(lock, [&] { return b.ticket != bt || b.remaining == 0; });
	return b.ticket != bt ? KVGPU_ERR_EXPIRED : b.first_err;
}

int JobTable::batch_poll(int64_t bt)
{
	std::lock_guard lock(mu_);
	if (bt <= 0 || bt >= next_batch_)
		return KVGPU_ERR_TICKET;
	const Batch &b = batches_[size_t(bt % int64_t(batches_.size()))];
	return b.ticket != bt || b.remaining == 0 ? 1 : 0;
}

void JobTable::stop()
{
	std::lock_guard lock(mu_);
	stop_ = true;
}

int JobTable::unwaited_error()
{
	std::lock_guard lock(mu_);
	int err = unwaited_error_;
	for (Job &j : jobs_)
		if (j.state == JobState::done && !j.waited && j.result < 0)
			err = j.result;
	return err;
}

bool JobTable::drained()
{
	std::lock_guard lock(mu_);
	return stop_ && pending_.empty();
}

bool JobTable::take_queued(std::vector<unsigned> *out)
{
	// Most passes (one per batch of completions) find nothing new: skip the lock then.
	if (!has_pending_.exchange(false, std::memory_order_acquire))
		return false;
	std::lock_guard lock(mu_);
	out->swap(pending_);
	for (unsigned j : *out)
		jobs_[j].state = JobState::active;
	return true;
}

void JobTable::finish_locked(unsigned j, int result)
{
	Job &job = jobs_[j];
	if (job.batch >= 0) {
		Batch &b = batches_[size_t(job.batch)];
		b.results[job.batch_pos] = result < 0 ? int64_t(result) : int64_t(job.bytes);
		if (result < 0 && b.first_err == 0)
			b.first_err = result;
		b.remaining--;
	}
	job.result = result;
	job.state = JobState::done;
	cv_.notify_all();
}

}  // namespace kvfdp::gpu
