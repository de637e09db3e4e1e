// split_io and sync_rw: the synchronous passthrough path of the guest-side check.
#include "tests/nvme/sync_io.hpp"

#include <cerrno>
#include <optional>

#include "nvme/commands.hpp"

namespace kvfdp::test {

using namespace kvfdp::nvme;

size_t split_io(uint64_t slba, uint64_t nlb, uint32_t max_nlb, uint32_t lba_size,
		std::span<IoChunk> out)
{
	if (max_nlb == 0 || max_nlb > kMaxNlb)
		max_nlb = kMaxNlb;
	size_t need = static_cast<size_t>((nlb + max_nlb - 1) / max_nlb);
	uint64_t done = 0;
	for (size_t i = 0; i < need && i < out.size(); ++i) {
		uint64_t left = nlb - done;
		uint32_t n = left < max_nlb ? static_cast<uint32_t>(left) : max_nlb;
		out[i] = IoChunk{slba + done, n, done * lba_size};
		done += n;
	}
	return need;
}

int sync_rw(UringPassthru &u, int fd, uint32_t nsid, bool write, uint64_t slba, uint64_t nlb,
	    void *buf, uint32_t lba_size, uint32_t max_transfer, int pid)
{
	if (lba_size == 0 || nlb == 0)
		return -EINVAL;
	uint32_t max_nlb = max_transfer / lba_size;
	if (max_nlb == 0)
		return -EINVAL;
	IoChunk chunks[32];
	auto *base = static_cast<uint8_t *>(buf);
	uint64_t done = 0;
	int first_error = 0;
	while (done < nlb) {
		size_t total = split_io(slba + done, nlb - done, max_nlb, lba_size, chunks);
		size_t batch = total < 32 ? total : 32;
		if (batch > u.entries())
			batch = u.entries();
		size_t queued = 0;
		for (size_t i = 0; i < batch; ++i) {
			const IoChunk &c = chunks[i];
			uint8_t *p = base + done * lba_size + c.buf_offset;
			uint32_t len = c.nlb * lba_size;
			UringCmd cmd =
				write ? make_write(nsid, c.slba, c.nlb, p, len,
						   pid >= 0 ? std::optional<uint16_t>(
								      static_cast<uint16_t>(pid))
							    : std::nullopt)
				      : make_read(nsid, c.slba, c.nlb, p, len);
			if (!u.queue(fd, kUringCmdIo, cmd, i))
				break;
			++queued;
		}
		int s = u.submit();
		if (s < 0)
			return s;
		size_t completed = 0;
		while (completed < queued) {
			int r = u.reap(1, [&](uint64_t, int res, uint32_t) {
				++completed;
				if (res != 0 && first_error == 0)
					first_error = res;
			});
			if (r < 0 && r != -EINTR)
				return r;
		}
		if (first_error)
			return first_error;
		for (size_t i = 0; i < queued; ++i)
			done += chunks[i].nlb;
	}
	return 0;
}

}  // namespace kvfdp::test
