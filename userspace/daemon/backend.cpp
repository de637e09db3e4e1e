// Backend selection: passthru, streams, file and model are part of every build.
#include "userspace/daemon/backend.hpp"

#include "nvme/backends.hpp"
#include "nvme/model/model_device.hpp"

namespace kvfdp::daemon {

Result<std::unique_ptr<nvme::Device>> open_backend(const BackendOptions &opts)
{
	if (opts.kind != "passthru" && opts.kind != "streams" && opts.kind != "file" && opts.kind != "model")
		return guidance_error(std::errc::invalid_argument,
				      "unknown backend '" + opts.kind + "' (use passthru, streams, model or file)");
	if (opts.kind == "passthru") {
		if (opts.device.empty())
			return guidance_error(std::errc::invalid_argument,
					      "--backend passthru needs --device /dev/ngXnY (an FDP namespace)");
		return nvme::open_passthru_device(opts.device);
	}
	if (opts.kind == "streams") {
		if (opts.device.empty())
			return guidance_error(std::errc::invalid_argument,
					      "--backend streams needs --device /dev/nvmeXnY (an FDP namespace's block device)");
		return nvme::open_streams_device(opts.device);
	}
	if (opts.kind == "file") {
		if (opts.file.empty())
			return guidance_error(std::errc::invalid_argument, "--backend file needs --file PATH (and --size for a new file)");
		nvme::FileDeviceOptions fo;
		fo.size_bytes = opts.size;
		fo.lba_size = opts.lba_size;
		return nvme::open_file_device(opts.file, fo);
	}
	if (opts.kind == "model") {
		if (opts.file.empty())
			return guidance_error(std::errc::invalid_argument,
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
	return make_error(std::errc::function_not_supported, "backend '" + opts.kind + "' is not available");
}

std::optional<uint16_t> handles_before_open(const BackendOptions &opts)
{
	if (opts.kind == "model")
		return opts.nruh;
	if (opts.kind == "file")
		return uint16_t{0};
	return std::nullopt;
}

} // namespace kvfdp::daemon
