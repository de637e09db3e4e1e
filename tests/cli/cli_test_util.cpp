// CLI test helpers: captured runs, the worked model device, golden files.
#include "tests/cli/cli_test_util.hpp"

#include <liburing.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "model/ftl/model_device.hpp"
#include "tests/support/temp_files.hpp"
#include "cli/command_context.hpp"

#ifndef KVFDP_CLI_GOLDEN_DIR
#error "KVFDP_CLI_GOLDEN_DIR must name tests/cli/golden"
#endif

namespace kvfdp::cli::test {

Ran run_cli(const std::vector<std::string> &args,
	    const std::function<void(CommandContext &)> &setup)
{
	std::ostringstream out, err;
	Ran r;
	r.rc = run(args, out, err, setup);
	r.out = out.str();
	r.err = err.str();
	return r;
}

namespace {

// Removes the model's data file when the device goes.
class OwnedModel final : public nvme::Device {
public:
	OwnedModel(std::unique_ptr<nvme::Device> d, std::unique_ptr<kvfdp::test::TempFile> file)
	    : file_(std::move(file)), d_(std::move(d))
	{
	}
	const nvme::DeviceInfo &info() const override { return d_->info(); }
	Result<std::vector<nvme::Handle>> handles() override { return d_->handles(); }
	Result<std::vector<uint8_t>> log_page(uint8_t lid, uint8_t lsp) override
	{
		return d_->log_page(lid, lsp);
	}
	Result<std::unique_ptr<nvme::IoQueue>> open_queue(io_uring &ring) override
	{
		return d_->open_queue(ring);
	}
	Result<void> ruh_update(std::span<const uint16_t> hs) override
	{
		return d_->ruh_update(hs);
	}

private:
	std::unique_ptr<kvfdp::test::TempFile> file_;  // outlives d_
	std::unique_ptr<nvme::Device> d_;
};

}  // namespace

Result<std::unique_ptr<nvme::Device>> make_worked_model()
{
	auto file =
		std::make_unique<kvfdp::test::TempFile>("/tmp", kvfdp::test::TempFile::MayFail{});
	if (!file->ok())
		return errno_error(errno, "mkstemp");
	model::ModelDeviceOptions o;
	o.config.logical_bytes = 64u << 20;
	o.config.lba_size = 4096;
	o.config.ru_size = 1u << 20;
	o.config.nruh = 4;
	o.config.op = 0.28;
	o.data_path = file->path;
	auto dev = model::open_model_device(o);
	if (!dev)
		return std::move(dev).error();
	std::unique_ptr<nvme::Device> owned =
		std::make_unique<OwnedModel>(std::move(dev).value(), std::move(file));
	io_uring ring{};
	if (int r = io_uring_queue_init(4, &ring, 0); r < 0)
		return errno_error(r, "io_uring_queue_init");
	auto q = owned->open_queue(ring);
	if (!q) {
		io_uring_queue_exit(&ring);
		return std::move(q).error();
	}
	const uint32_t nlb = 32;  // 128 KiB
	std::vector<uint8_t> buf(nlb * 4096, 0xA5);
	const uint64_t total = owned->info().nlb;
	int rc = 0;
	const uint64_t chunks = total / nlb;
	for (int pass = 0; pass < 3 && rc == 0; pass++)
		for (uint64_t i = 0; i < chunks && rc == 0; i++) {
			// Pass 0 fills the namespace in order; passes 1 and 2 rewrite in a scattered
			// order (so GC finds partly valid RUs and relocates), except every fourth
			// chunk: long-lived data on handle 3, written once.
			uint64_t chunk =
				pass == 0 ? i : (i * 197 + static_cast<uint64_t>(pass)) % chunks;
			if (pass > 0 && chunk % 4 == 3)
				continue;
			nvme::IoRequest req;
			req.op = nvme::IoOp::write;
			req.handle = static_cast<uint16_t>(chunk % 4 == 3 ? 3 : 1 + chunk % 2);
			req.nlb = nlb;
			req.slba = chunk * nlb;
			req.buf = buf.data();
			auto p = (*q)->prep(ring, req);
			rc = p.queued ? -EINVAL : p.result;
		}
	if (rc == 0) {
		nvme::IoRequest
			bad;  // handle 9 does not exist: the model logs an invalid-PID event
		bad.op = nvme::IoOp::write;
		bad.handle = 9;
		bad.nlb = 1;
		bad.slba = 0;
		bad.buf = buf.data();
		rc = (*q)->prep(ring, bad).result;
	}
	q->reset();
	io_uring_queue_exit(&ring);
	if (rc != 0)
		return make_error(std::errc::io_error, "model write failed: " + std::to_string(rc));
	return owned;
}

std::string golden_diff(const std::string &name, const std::string &text)
{
	std::string path = std::string(KVFDP_CLI_GOLDEN_DIR) + "/" + name;
	const char *upd = std::getenv("KVFDP_UPDATE_GOLDEN");
	if (upd && std::string(upd) == "1") {
		std::ofstream f(path, std::ios::trunc);
		f << text;
		return f ? "" : "cannot write " + path;
	}
	std::ifstream f(path);
	if (!f)
		return "missing golden " + path + " (run with KVFDP_UPDATE_GOLDEN=1 to create it)";
	std::stringstream ss;
	ss << f.rdbuf();
	std::string want = ss.str();
	if (want == text)
		return "";
	std::istringstream a(want), b(text);
	std::string la, lb;
	for (int line = 1;; line++) {
		bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
		if (ea && eb)
			break;
		if (ea || eb || la != lb)
			return name + ":" + std::to_string(line) + ": want [" +
			       (ea ? "<eof>" : la) + "] got [" + (eb ? "<eof>" : lb) + "]";
	}
	return name + ": differs (line endings?)";
}

}  // namespace kvfdp::cli::test
