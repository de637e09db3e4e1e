// A thin C++ layer over kvgpu.h: an owning Store, std::error_code errors, spans for buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

#include "kvgpu/kvgpu.h"

namespace kvfdp::gpu {

// std::error_code category of the kvgpu_error values; message() is kvgpu_strerror.
inline const std::error_category &kvgpu_category()
{
	struct Category final : std::error_category {
		const char *name() const noexcept override { return "kvgpu"; }
		std::string message(int code) const override { return kvgpu_strerror(code); }
	};
	static const Category c;
	return c;
}

// A kvgpu return value (0 / positive, or a negative kvgpu_error) as an error_code.
inline std::error_code make_kvgpu_error(int64_t rc)
{
	return rc < 0 ? std::error_code(static_cast<int>(rc), kvgpu_category()) : std::error_code();
}

// Owns a kvgpu_ctx; closed (after finishing in-flight evicts) on destruction.
class Store {
public:
	Store() = default;
	Store(Store &&o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
	Store &operator=(Store &&o) noexcept
	{
		if (this != &o) {
			(void)close();
			ctx_ = std::exchange(o.ctx_, nullptr);
		}
		return *this;
	}
	Store(const Store &) = delete;
	Store &operator=(const Store &) = delete;
	~Store() { (void)close(); }

	// Opens dir; on failure returns an empty Store and sets ec.
	[[nodiscard]] static Store open(const std::string &dir, const kvgpu_options *opts,
					std::error_code &ec)
	{
		Store s;
		ec = make_kvgpu_error(kvgpu_open(dir.c_str(), opts, &s.ctx_));
		return s;
	}

	[[nodiscard]] bool valid() const noexcept { return ctx_ != nullptr; }
	[[nodiscard]] kvgpu_ctx *get() const noexcept { return ctx_; }

	// Starts an evict; returns the ticket (> 0) or a negative kvgpu_error. src must stay valid until wait.
	[[nodiscard]] int64_t evict(const void *src, size_t bytes, const std::string &key,
				    int lifetime, void *stream = nullptr) const
	{
		return kvgpu_evict(ctx_, src, bytes, key.c_str(), lifetime, stream);
	}
	// Waits for one ticket (0: for all issued so far).
	[[nodiscard]] std::error_code wait(int64_t ticket) const
	{
		return make_kvgpu_error(kvgpu_wait(ctx_, ticket));
	}
	// evict + wait.
	[[nodiscard]] std::error_code put(const void *src, size_t bytes, const std::string &key,
					  int lifetime, void *stream = nullptr) const
	{
		int64_t t = evict(src, bytes, key, lifetime, stream);
		return t < 0 ? make_kvgpu_error(t) : wait(t);
	}
	// Loads into dst; returns the chunk length or a negative kvgpu_error.
	[[nodiscard]] int64_t load(const std::string &key, void *dst, size_t bytes,
				   void *stream = nullptr) const
	{
		return kvgpu_load(ctx_, key.c_str(), dst, bytes, stream);
	}
	// The chunk length under key, or a negative kvgpu_error (KVGPU_ERR_NOT_FOUND).
	[[nodiscard]] int64_t lookup(const std::string &key) const
	{
		return kvgpu_lookup(ctx_, key.c_str());
	}
	[[nodiscard]] std::error_code remove(const std::string &key) const
	{
		return make_kvgpu_error(kvgpu_remove(ctx_, key.c_str()));
	}
	// 1 when a chunk is stored under key (a bounded store answers from its index), 0, or an error.
	[[nodiscard]] int contains(const std::string &key) const
	{
		return kvgpu_contains(ctx_, key.c_str());
	}
	// Starts n loads at once (see kvgpu_load_batch); returns a batch ticket or a negative kvgpu_error.
	[[nodiscard]] int64_t load_batch(size_t n, const char *const *keys, void *const *dsts,
					 const size_t *sizes, int64_t *results,
					 void *stream = nullptr) const
	{
		return kvgpu_load_batch(ctx_, n, keys, dsts, sizes, results, stream);
	}
	// Waits for a batch: 0, or the first entry's error (each entry's is in its results slot).
	[[nodiscard]] std::error_code batch_wait(int64_t batch) const
	{
		return make_kvgpu_error(kvgpu_batch_wait(ctx_, batch));
	}
	// Stages chunks in the pinned prefetch buffers; returns how many, or a negative kvgpu_error.
	[[nodiscard]] int prefetch(size_t n, const char *const *keys) const
	{
		return kvgpu_prefetch(ctx_, n, keys);
	}
	[[nodiscard]] kvgpu_stats_t stats() const
	{
		kvgpu_stats_t s{};
		(void)kvgpu_stats(ctx_, &s);
		return s;
	}
	// Finishes in-flight evicts and closes; returns the last error nobody waited for.
	std::error_code close()
	{
		return make_kvgpu_error(kvgpu_close(std::exchange(ctx_, nullptr)));
	}

private:
	kvgpu_ctx *ctx_ = nullptr;
};

}  // namespace kvfdp::gpu
