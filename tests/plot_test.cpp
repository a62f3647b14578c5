// kvplan plot: the series come from the plan, the SVG draws exactly them, and it renders.
// Hand figures for llama3.1-8b on an RTX 4090 (generic profile):
//   weights 16,060,522,496 B; overhead 2 GiB = 2,147,483,648 B; capacity 25,757,220,864 B
//   KV a token: fp16 131,072 B (2 x 32 layers x 8 heads x 128 x 2 B), fp8 65,536 B
//   largest ctx: (25,757,220,864 - 16,060,522,496 - 2,147,483,648) = 7,549,214,720 B for the cache
//     / 131,072 = 57,595.6 -> 57,595 (fp16); / 65,536 = 115,191.2 -> 115,191 (fp8)

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/chart.h"
#include "kvplan/error.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;

namespace {

kvplan::PlanRequest fp16_fp8_to(std::uint64_t end) {
  kvplan::PlanRequest request;
  request.contexts = {end};
  const kvplan::Dtype& bf16 = kvplan::parse_weight_dtype("bf16");
  for (const char* name : {"fp16", "fp8"}) {
    const kvplan::Dtype& type = kvplan::parse_kv_dtype(name, bf16);
    request.caches.push_back({&type, &type});
  }
  return request;
}

/// Runs a shell command and returns its stdout (and its exit status in `status`).
std::string shell(const std::string& command, int& status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) {
    status = -1;
    return out;
  }
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  status = pclose(pipe);
  return out;
}

std::string xpath(const std::string& file, const std::string& expression) {
  int status = 0;
  std::string out = shell("xmllint --xpath '" + expression + "' '" + file + "' 2>/dev/null", status);
  while (!out.empty() && out.back() == '\n') out.pop_back();  // xmllint ends its answer with a newline
  return out;
}

}  // namespace

TEST_CASE("plot: the series are the plan's rows", "[plot]") {
  const kvplan::ModelSpec& model = *kvplan::builtin_models().find("llama3.1-8b");
  const std::vector<kvplan::GpuSpec> gpus{*kvplan::builtin_gpus().find("4090")};
  const kvplan::MemoryChart chart = kvplan::memory_chart(model, gpus, fp16_fp8_to(131'072), 4);
  CHECK(chart.capacity_bytes == 25'757'220'864ULL);
  CHECK(chart.ctx_end == 131'072);
  REQUIRE(chart.series.size() == 2);
  const kvplan::ChartSeries& fp16 = chart.series[0];
  CHECK(fp16.cache.label() == "fp16");
  REQUIRE(fp16.points.size() == 4);  // 131,072 / 4 = 32,768 apart
  CHECK(fp16.points[0].ctx == 32'768);
  CHECK(fp16.points[0].weights_bytes == 16'060'522'496ULL);
  CHECK(fp16.points[0].kv_bytes == 4'294'967'296ULL);   // 131,072 x 32,768
  CHECK(fp16.points[0].other_bytes == 2'147'483'648ULL);
  CHECK(fp16.points[0].total_bytes == 22'502'973'440ULL);
  CHECK(fp16.points[0].fits);
  CHECK(fp16.points[1].total_bytes == 26'797'940'736ULL);  // 8 GiB of cache at 65,536
  CHECK_FALSE(fp16.points[1].fits);
  CHECK(fp16.points[3].ctx == 131'072);
  CHECK(*fp16.max_ctx == 57'595);
  const kvplan::ChartSeries& fp8 = chart.series[1];
  CHECK(fp8.points[2].ctx == 98'304);
  CHECK(fp8.points[2].kv_bytes == 6'442'450'944ULL);  // 65,536 x 98,304
  CHECK(fp8.points[2].fits);
  CHECK(*fp8.max_ctx == 115'191);
  // The range's remainder lands on the last point: 100,000 / 3 = 33,333 apart, then 100,000.
  const kvplan::MemoryChart odd = kvplan::memory_chart(model, gpus, fp16_fp8_to(100'000), 3);
  CHECK(odd.series[0].points[0].ctx == 33'333);
  CHECK(odd.series[0].points[1].ctx == 66'666);
  CHECK(odd.series[0].points[2].ctx == 100'000);
  CHECK_THROWS_AS(kvplan::memory_chart(model, gpus, fp16_fp8_to(1), 4), kvplan::Error);
  CHECK_THROWS_AS(kvplan::memory_chart(model, gpus, fp16_fp8_to(131'072), 1), kvplan::Error);
}

TEST_CASE("plot: -o writes an SVG whose figures are the plan's", "[plot]") {
  kvplan::testing::TempDir dir;
  const std::string file = dir.file("chart.svg");
  const ProcessResult result =
      run_kvplan("plot --model llama3.1-8b --gpu 4090 --kv-dtype fp16,fp8 --ctx 128k --points 4 -o '" + file + "'");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.empty());
  CHECK(result.err.empty());
  REQUIRE(std::filesystem::exists(file));
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(file).parent_path()))
    CHECK(entry.path().filename() == "chart.svg");  // no temporary file left behind

  int status = 0;
  shell("xmllint --noout '" + file + "' 2>&1", status);
  REQUIRE(status == 0);  // well-formed XML
  CHECK(xpath(file, "string(/*[local-name()=\"svg\"]/@data-capacity-bytes)") == "25757220864");
  CHECK(xpath(file, "string(//*[local-name()=\"g\"][@data-kv-dtype=\"fp16\"]/@data-max-ctx)") == "57595");
  CHECK(xpath(file, "string(//*[local-name()=\"g\"][@data-kv-dtype=\"fp8\"]//*[@class=\"max-ctx\"]/@data-ctx)") == "115191");
  CHECK(xpath(file, "count(//*[local-name()=\"circle\"][@class=\"point\"])") == "8");
  CHECK(xpath(file, "string((//*[local-name()=\"g\"][@data-kv-dtype=\"fp16\"]//*[@class=\"point\"])[2]/@data-total-bytes)") ==
        "26797940736");
  CHECK(xpath(file, "string((//*[local-name()=\"g\"][@data-kv-dtype=\"fp16\"]//*[@class=\"point\"])[1]/@data-kv-bytes)") ==
        "4294967296");
  CHECK(xpath(file, "count(//*[local-name()=\"line\"][@class=\"capacity\"][@data-bytes=\"25757220864\"])") == "2");
  // Self-contained: no scripts, no links, no fonts fetched from anywhere.
  const std::string svg = kvplan::testing::read_file(file);
  CHECK(svg.find("<script") == std::string::npos);
  CHECK(svg.find("href") == std::string::npos);
  CHECK(svg.find("@font-face") == std::string::npos);
  CHECK(svg.find("url(") == std::string::npos);
  CHECK(svg.find("http://") == svg.rfind("http://"));  // the SVG namespace, once
  CHECK_THAT(svg, Catch::Contains("KV cache fp16: fits up to 57,595 tokens"));
  CHECK_THAT(svg, Catch::Contains("capacity 23.99 GiB"));
}

TEST_CASE("plot: stdout, terminal bars and bad input", "[plot]") {
  const ProcessResult svg = run_kvplan("plot --model llama3.1-8b --gpu 4090 --kv-dtype fp8 --points 8");
  REQUIRE(svg.exit_code == 0);
  CHECK(svg.out.rfind("<?xml", 0) == 0);
  const ProcessResult table = run_kvplan("plot --model llama3.1-8b --gpu 4090 --kv-dtype fp16 --ctx 128k --points 4 --format table");
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("KV cache fp16: fits up to 57,595 tokens"));
  CHECK_THAT(table.out, Catch::Contains(" 32,768  ["));
  CHECK_THAT(table.out, Catch::Contains("20.96"));  // 22,502,973,440 B at 32,768
  kvplan::testing::check_refused(run_kvplan("plot --model llama3.1-8b"), "--gpu is required");
  kvplan::testing::check_refused(run_kvplan("plot --model llama3.1-8b --gpu 4090 --format csv"), "svg or table");
  kvplan::testing::check_refused(run_kvplan("plot --model llama3.1-8b --gpu 4090 --points 1"), "--points");
  kvplan::testing::check_refused(run_kvplan("plot --model llama3.1-8b --gpu 4090 --ctx 32k,64k"), "one context");
  kvplan::testing::check_refused(run_kvplan("plot --model llama3.1-8b --gpu 4090 -o /nonexistent/dir/chart.svg"),
                                 "/nonexistent/dir/chart.svg", 5);
}

TEST_CASE("plot: one rendering in headless Chromium, kept in the build folder", "[plot]") {
  int status = 0;
  shell("command -v chromium >/dev/null 2>&1", status);
  if (status != 0) {
    WARN("chromium is not installed (scripts/setup.sh --tests installs it): the SVG was not rendered");
    return;
  }
  const std::filesystem::path artifacts = std::filesystem::path(KVPLAN_BINARY).parent_path() / "test-artifacts";
  std::filesystem::create_directories(artifacts);
  const std::string svg = (artifacts / "plot.svg").string();
  const std::string png = (artifacts / "plot.png").string();
  std::filesystem::remove(png);
  const ProcessResult result = run_kvplan("plot --model llama3.1-8b --gpu 4090 --ctx 128k -o '" + svg + "'");
  REQUIRE(result.exit_code == 0);
  // The chart is 760 wide; four panels of 230 under a 92-pixel heading: 1,022 high.
  shell("HOME=\"$(mktemp -d)\" timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
        "--window-size=760,1022 --screenshot='" + png + "' 'file://" + svg + "' >/dev/null 2>&1",
        status);
  REQUIRE(std::filesystem::exists(png));
  CHECK(std::filesystem::file_size(png) > 20'000);  // a drawn chart, not a blank page
  // A PNG: its signature, and its width and height in the IHDR chunk.
  std::ifstream in(png, std::ios::binary);
  unsigned char head[24] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  CHECK(head[1] == 'P');
  const auto be32 = [&](int at) {
    return (std::uint32_t{head[at]} << 24) | (std::uint32_t{head[at + 1]} << 16) | (std::uint32_t{head[at + 2]} << 8) | head[at + 3];
  };
  CHECK(be32(16) == 760);
  CHECK(be32(20) == 1022);
}
