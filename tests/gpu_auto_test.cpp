// --gpu auto: the vendor tools' outputs (captured from real machines, tests/fixtures/gpu_auto/
// SOURCES.md) read into cards, the tool runner's limits, and the whole command with stand-in
// nvidia-smi, rocm-smi and sysctl scripts on the PATH.

#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include <catch2/catch.hpp>

#include "cli/run_tool.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/detect/detected_gpus.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

namespace kvplan {
namespace {

using testing::check_refused;
using testing::read_file;
using testing::run_kvplan;
using testing::source_path;
using testing::TempDir;

std::string capture(const std::string& name) { return read_file(source_path("tests/fixtures/gpu_auto/" + name)); }

ExitCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.code();
  }
  return ExitCode::ok;
}

/// An executable script `name` in `dir` that prints the capture `file` and exits `status`.
void stand_in(const TempDir& dir, const std::string& name, const std::string& file, int status = 0) {
  const std::string path = dir.file(name);
  std::ofstream(path) << "#!/bin/sh\n/bin/cat '" << source_path("tests/fixtures/gpu_auto/" + file) << "'\nexit " << status
                      << "\n";
  chmod(path.c_str(), 0755);
}

void script(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.file(name);
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
}

}  // namespace

TEST_CASE("nvidia-smi's CSV: one, two, three and six cards, MiB to bytes", "[gpu_auto]") {
  const std::vector<DetectedGpu> one = parse_nvidia_smi_csv(capture("nvidia-smi-rtx3090.csv"));
  REQUIRE(one.size() == 1);
  CHECK(one[0].index == "0");
  CHECK(one[0].name == "NVIDIA GeForce RTX 3090");
  CHECK(one[0].total_bytes == 24576 * MiB);  // 25,769,803,776
  CHECK(one[0].used_bytes == 15005 * MiB);

  const std::vector<DetectedGpu> six = parse_nvidia_smi_csv(capture("nvidia-smi-6x-rtx4090.csv"));
  REQUIRE(six.size() == 6);
  CHECK(six[5].index == "5");
  CHECK(six[5].total_bytes == 24564 * MiB);
  CHECK(six[4].used_bytes == 4171 * MiB);

  const std::vector<DetectedGpu> b200 = parse_nvidia_smi_csv(capture("nvidia-smi-2x-b200.csv"));
  REQUIRE(b200.size() == 2);
  CHECK(b200[1].total_bytes == 183359 * MiB);
  CHECK(b200[1].used_bytes == std::uint64_t{0});

  const std::vector<DetectedGpu> v100 = parse_nvidia_smi_csv(capture("nvidia-smi-3x-v100.csv"));
  REQUIRE(v100.size() == 3);
  CHECK(v100[0].name == "Tesla V100-PCIE-32GB");

  // [N/A] in use: known as unknown; [N/A] in all: nothing to plan against (exit 3).
  const std::vector<DetectedGpu> na = parse_nvidia_smi_csv(capture("nvidia-smi-used-na.csv"));
  REQUIRE(na.size() == 1);
  CHECK_FALSE(na[0].used_bytes.has_value());
  CHECK(code_of([] { parse_nvidia_smi_csv("0, NVIDIA A100-SXM4-80GB, [N/A], [N/A]\n"); }) ==
        ExitCode::unsupported_architecture);
  CHECK(code_of([] { parse_nvidia_smi_csv("0, GPU, [Not Supported], 0\n"); }) == ExitCode::unsupported_architecture);

  // Another shape is exit 2: a header line, the table view, nothing at all, a size that wraps.
  CHECK(code_of([] { parse_nvidia_smi_csv("index, name, memory.total [MiB], memory.used [MiB]\n"); }) ==
        ExitCode::invalid_input);
  CHECK(code_of([] { parse_nvidia_smi_csv(capture("nvidia-smi-driver-mismatch.txt")); }) == ExitCode::invalid_input);
  CHECK(code_of([] { parse_nvidia_smi_csv(""); }) == ExitCode::invalid_input);
  CHECK(code_of([] { parse_nvidia_smi_csv("0, GPU, 18446744073709551615, 0\n"); }) == ExitCode::invalid_input);
  CHECK(code_of([] { parse_nvidia_smi_csv("0, GPU, 0, 0\n"); }) == ExitCode::invalid_input);
  // A name with a comma keeps it: only the first and the last two commas separate fields.
  CHECK(parse_nvidia_smi_csv("0, Card, Rev 2, 1024, 1\n")[0].name == "Card, Rev 2");
}

TEST_CASE("rocm-smi's JSON and a Mac's sysctl", "[gpu_auto]") {
  const std::vector<DetectedGpu> amd = parse_rocm_smi_json(capture("rocm-smi-rx7900xt.json"));
  REQUIRE(amd.size() == 1);
  CHECK(amd[0].index == "card0");
  CHECK(amd[0].name == "Radeon RX 7900 XT");
  CHECK(amd[0].total_bytes == 21458059264u);
  CHECK(amd[0].used_bytes == std::uint64_t{27856896});
  CHECK(code_of([] { parse_rocm_smi_json(R"({"card0": {"Card Series": "X"}})"); }) == ExitCode::unsupported_architecture);
  CHECK(code_of([] { parse_rocm_smi_json("ERROR: GPU[0] : Unable to get GPU memory use."); }) == ExitCode::invalid_input);
  CHECK(code_of([] { parse_rocm_smi_json(R"({"system": {}})"); }) == ExitCode::invalid_input);

  const DetectedGpu mac = parse_apple_sysctl(capture("sysctl-m3-max-128gb.txt"));
  CHECK(mac.name == "Apple M3 Max");
  CHECK(mac.total_bytes == 128 * GiB);
  CHECK(code_of([] { parse_apple_sysctl("sysctl: unknown oid 'hw.memsize'"); }) == ExitCode::invalid_input);
}

TEST_CASE("the tool runner: found on the given PATH only, killed past its time, bounded output", "[gpu_auto]") {
  TempDir dir("kvplan_gpu_auto");
  script(dir, "slow", "exec /bin/sleep 20");
  script(dir, "chatty", "exec /usr/bin/yes");
  script(dir, "fails", "echo 'No devices were found'; exit 6");
  CHECK(find_on_path("slow", dir.file("")) == dir.file("slow"));
  CHECK(find_on_path("slow", "relative/dir:" + dir.file("missing")) == std::nullopt);
  CHECK(find_on_path("sh", "") == std::nullopt);

  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(run_tool(dir.file("slow"), {}, "", std::chrono::milliseconds(300)),
                    Catch::Contains("slow did not answer within"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK_THROWS_WITH(run_tool(dir.file("chatty"), {}, "", std::chrono::seconds(10)), Catch::Contains("more than 1 MiB"));
  const ToolResult failed = run_tool(dir.file("fails"), {}, "", std::chrono::seconds(10));
  CHECK(failed.exit_status == 6);
  CHECK(failed.output == "No devices were found\n");
}

TEST_CASE("kvplan --gpu auto with stand-in tools on the PATH", "[gpu_auto]") {
  TempDir one("kvplan_gpu_auto");
  stand_in(one, "nvidia-smi", "nvidia-smi-rtx3090.csv");
  const std::string path_one = "PATH=" + one.file("");
  // 15005 of 24576 MiB in use: 9571 MiB = 9.35 GiB left; Llama 3.1 8B's 14.96 GiB of weights + 1.00
  // of cache at 8K + 2.00 overhead = 17.96 GiB does not fit, and does on the empty card.
  const testing::ProcessResult busy =
      run_kvplan("--model llama3.1-8b --ctx 8k --kv-dtype fp16 --gpu auto --check", path_one);
  CHECK(busy.exit_code == 1);
  CHECK_THAT(busy.out, Catch::Contains("GPU     NVIDIA GeForce RTX 3090: 24.00 GiB (25,769,803,776 bytes, detected)"));
  CHECK_THAT(busy.out, Catch::Contains("at most 9.35 GiB per GPU (14.65 GiB held by other processes of 24.00 GiB)"));
  CHECK(run_kvplan("--model llama3.1-8b --ctx 8k --kv-dtype fp16 --gpu auto --ignore-used --check", path_one).exit_code == 0);
  // --used given wins over what the tool says.
  CHECK(run_kvplan("--model llama3.1-8b --ctx 8k --kv-dtype fp16 --gpu auto --used 1GiB --check", path_one).exit_code == 0);
  const testing::ProcessResult json = run_kvplan("--model llama3.1-8b --ctx 8k --kv-dtype fp16 --gpu auto --format json", path_one);
  CHECK_THAT(json.out, Catch::Contains("--gpu auto: nvidia-smi GPU 0 'NVIDIA GeForce RTX 3090', 24576 MiB in all, 15005 MiB in use"));
  CHECK(run_kvplan("max --model llama3.1-8b --kv-dtype fp16 --gpu auto --ignore-used", path_one).exit_code == 0);
  // kvplan max and fit name the card as the plan does (one gpu_to_json), the detection included.
  CHECK_THAT(run_kvplan("max --model llama3.1-8b --kv-dtype fp16 --gpu auto --ignore-used --format json", path_one).out,
             Catch::Contains("\"memory_source\": \"--gpu auto: nvidia-smi GPU 0 'NVIDIA GeForce RTX 3090'"));

  // Six cards: one --used for all of them, the fullest card's (22273 MiB = 21.75 GiB).
  TempDir six("kvplan_gpu_auto");
  stand_in(six, "nvidia-smi", "nvidia-smi-6x-rtx4090.csv");
  const testing::ProcessResult box = run_kvplan("--model llama3.1-8b --ctx 8k --kv-dtype fp16 --gpu auto", "PATH=" + six.file(""));
  CHECK(box.exit_code == 0);
  CHECK_THAT(box.out, Catch::Contains("GPU     6 x NVIDIA GeForce RTX 4090: 23.99 GiB each (25,757,220,864 bytes, detected)"));
  CHECK_THAT(box.out, Catch::Contains("21.75 GiB held by other processes"));

  // A card that does not report what is in use: unknown (exit 3), with the ways forward.
  TempDir na("kvplan_gpu_auto");
  stand_in(na, "nvidia-smi", "nvidia-smi-used-na.csv");
  check_refused(run_kvplan("--model llama3.1-8b --gpu auto", "PATH=" + na.file("")),
                "does not report the memory in use on GPU 0 ('NVIDIA A100-SXM4-80GB'): give --used SIZE, or --ignore-used", 3);
  CHECK(run_kvplan("--model llama3.1-8b --gpu auto --ignore-used", "PATH=" + na.file("")).exit_code == 0);

  // A failing tool, no tool, a hang: one line, exit 2, naming --gpu NAME.
  TempDir broken("kvplan_gpu_auto");
  stand_in(broken, "nvidia-smi", "nvidia-smi-driver-mismatch.txt", 18);
  check_refused(run_kvplan("--model llama3.1-8b --gpu auto", "PATH=" + broken.file("")),
                "--gpu auto: nvidia-smi failed (exit 18): Failed to initialize NVML: Driver/library version mismatch; give "
                "--gpu NAME");
  TempDir empty("kvplan_gpu_auto");
  check_refused(run_kvplan("--model llama3.1-8b --gpu auto", "PATH=" + empty.file("")),
                "--gpu auto: no nvidia-smi or rocm-smi on the PATH, and not a Mac: give --gpu NAME");
  // Linux's own sysctl knows no hw.memsize: not a Mac.
  TempDir linux_sysctl("kvplan_gpu_auto");
  script(linux_sysctl, "sysctl", "echo \"sysctl: cannot stat /proc/sys/hw/memsize: No such file or directory\" >&2; exit 255");
  check_refused(run_kvplan("--model llama3.1-8b --gpu auto", "PATH=" + linux_sysctl.file("")), "and not a Mac");

  // AMD and a Mac.
  TempDir amd("kvplan_gpu_auto");
  stand_in(amd, "rocm-smi", "rocm-smi-rx7900xt.json");
  const testing::ProcessResult radeon = run_kvplan("--model llama3.1-8b --ctx 8k --kv-dtype fp16 --gpu auto", "PATH=" + amd.file(""));
  CHECK(radeon.exit_code == 0);
  CHECK_THAT(radeon.out, Catch::Contains("Radeon RX 7900 XT: 19.98 GiB (21,458,059,264 bytes, detected)"));
  TempDir mac("kvplan_gpu_auto");
  stand_in(mac, "sysctl", "sysctl-m3-max-128gb.txt");
  const testing::ProcessResult m3 = run_kvplan("--model llama3.1-8b --ctx 8k --kv-dtype fp16 --gpu auto", "PATH=" + mac.file(""));
  CHECK(m3.exit_code == 0);
  // macOS grants 3/4 of 128 GiB to the GPU: 96 GiB.
  CHECK_THAT(m3.out, Catch::Contains("GPU     Apple M3 Max (128 GiB unified memory): 96.00 GiB (103,079,215,104 bytes, macOS GPU working set)"));

  // What auto does not combine with.
  check_refused(run_kvplan("--model llama3.1-8b --gpu 4090 --ignore-used"), "--ignore-used: only with --gpu auto");
  check_refused(run_kvplan("--model llama3.1-8b --gpu auto --gpus 2", path_one), "--gpu auto counts this machine's cards itself");
  check_refused(run_kvplan("sweep --models llama3.1-8b --gpus auto --ctx 8k", path_one), "'auto' plans the main command");
}

}  // namespace kvplan
