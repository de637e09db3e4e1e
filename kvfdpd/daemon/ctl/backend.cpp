// Backend selection: passthru, streams, file and model are part of every build; several
// members of one backend make a stripe.
#include "kvfdpd/daemon/ctl/backend.hpp"

#include "nvme/backends.hpp"
#include "model/ftl/model_device.hpp"
#include "nvme/stripe.hpp"
#include "proto/backend_kind.hpp"

namespace kvfdp::daemon {

namespace {

Result<std::unique_ptr<nvme::Device>> open_one(const BackendOptions &opts);

// Each member opened like a single device of its path, then the stripe.
Result<std::unique_ptr<nvme::Device>> open_stripe(const BackendOptions &opts)
{
	std::vector<nvme::StripeMemberSpec> specs;
	const bool by_file = proto::backend_by_file(opts.kind);
	for (size_t m = 0; m < opts.members.size(); m++) {
		BackendOptions one = opts;
		one.members.clear();
		(by_file ? one.file : one.device) = opts.members[m];
		auto dev = open_one(one);
		if (!dev) {
			Error e = std::move(dev).error();
			e.context = nvme::stripe_member_name(m, opts.members[m]) + ": " + e.context;
			return e;
		}
		specs.push_back(nvme::StripeMemberSpec{opts.members[m], std::move(*dev)});
	}
	nvme::StripeOptions so;
	so.stripe_bytes = opts.stripe_bytes;
	auto sd = nvme::open_stripe_device(std::move(specs), so);
	if (!sd)
		return std::move(sd).error();
	return std::unique_ptr<nvme::Device>(std::move(*sd));
}

}  // namespace

Result<std::unique_ptr<nvme::Device>> open_backend(const BackendOptions &opts)
{
	if (opts.members.size() > 1)
		return open_stripe(opts);
	if (opts.members.size() == 1) {
		BackendOptions one = opts;
		one.members.clear();
		(proto::backend_by_file(opts.kind) ? one.file : one.device) = opts.members[0];
		return open_one(one);
	}
	return open_one(opts);
}

namespace {

Result<std::unique_ptr<nvme::Device>> open_one(const BackendOptions &opts)
{
	using proto::BackendKind;
	const std::optional<BackendKind> kind = proto::parse_backend(opts.kind);
	if (!kind)
		return guidance_error(std::errc::invalid_argument,
				      "unknown backend '" + opts.kind + "' (use " +
					      proto::backend_list() + ")");
	if (kind == BackendKind::passthru) {
		if (opts.device.empty())
			return guidance_error(
				std::errc::invalid_argument,
				"--backend passthru needs --device /dev/ngXnY (an FDP namespace)");
		return nvme::open_passthru_device(opts.device);
	}
	if (kind == BackendKind::streams) {
		if (opts.device.empty())
			return guidance_error(
				std::errc::invalid_argument,
				"--backend streams needs --device /dev/nvmeXnY (an FDP namespace's block device)");
		return nvme::open_streams_device(opts.device);
	}
	if (kind == BackendKind::file) {
		if (opts.file.empty())
			return guidance_error(
				std::errc::invalid_argument,
				"--backend file needs --file PATH (and --size for a new file)");
		nvme::FileDeviceOptions fo;
		fo.size_bytes = opts.size;
		fo.lba_size = opts.lba_size;
		return nvme::open_file_device(opts.file, fo);
	}
	if (kind == BackendKind::model) {
		if (opts.file.empty())
			return guidance_error(
				std::errc::invalid_argument,
				"--backend model needs --file PATH for its sparse data file");
		model::ModelDeviceOptions mo;
		if (opts.size)
			mo.config.logical_bytes = opts.size;
		mo.config.lba_size = opts.lba_size;
		mo.config.ru_size = opts.ru_size;
		mo.config.nruh = opts.nruh;
		mo.config.op = opts.op;
		mo.data_path = opts.file;
		return model::open_model_device(mo);
	}
	return make_error(std::errc::function_not_supported,
			  "backend '" + opts.kind + "' is not available");
}

}  // namespace

std::optional<uint16_t> handles_before_open(const BackendOptions &opts)
{
	const std::optional<proto::BackendKind> kind = proto::parse_backend(opts.kind);
	if (kind == proto::BackendKind::model)
		return opts.nruh;
	if (kind == proto::BackendKind::file)
		return uint16_t{0};
	return std::nullopt;
}

}  // namespace kvfdp::daemon
