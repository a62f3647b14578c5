#include "reports/chart_svg.h"

#include <algorithm>

#include <fmt/format.h>

#include "kvplan/units.h"
#include "model/text.h"

namespace kvplan {

namespace {

constexpr double kWidth = 760;
constexpr double kLeft = 70;
constexpr double kRight = 740;
constexpr double kTop = 92;           // the first panel's top, under the title and legend
constexpr double kPanelHeight = 230;  // each panel, its caption and axis labels included
constexpr double kPlotTop = 26;       // inside a panel: where the plot area starts
constexpr double kPlotHeight = 160;

constexpr std::string_view kWeightsColor = "#4c72b0";
constexpr std::string_view kKvColor = "#dd8452";
constexpr std::string_view kOtherColor = "#a0a0a0";
constexpr std::string_view kCapacityColor = "#c0392b";
constexpr std::string_view kFitColor = "#1e8449";

std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : printable(text, 400)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string gib(std::uint64_t bytes) { return format_gib(static_cast<std::int64_t>(bytes)); }

/// Pixels from figures: the only arithmetic here, and it only places what the chart says.
struct Scale {
  double ctx_end;
  double bytes_top;
  double panel_top;
  double x(std::uint64_t ctx) const { return kLeft + (kRight - kLeft) * static_cast<double>(ctx) / ctx_end; }
  double y(std::uint64_t bytes) const {
    return panel_top + kPlotTop + kPlotHeight * (1.0 - static_cast<double>(bytes) / bytes_top);
  }
};

/// A band between two stacked levels: `low(point)` to `high(point)` along the series.
template <typename Low, typename High>
std::string band(const ChartSeries& series, const Scale& s, std::string_view css, std::string_view color, Low low, High high) {
  std::string points;
  for (const ChartPoint& p : series.points) points += fmt::format("{:.1f},{:.1f} ", s.x(p.ctx), s.y(high(p)));
  for (auto it = series.points.rbegin(); it != series.points.rend(); ++it)
    points += fmt::format("{:.1f},{:.1f} ", s.x(it->ctx), s.y(low(*it)));
  points.pop_back();
  return fmt::format("    <polygon class=\"{}\" fill=\"{}\" points=\"{}\"/>\n", css, color, points);
}

}  // namespace

std::string format_chart_svg(const MemoryChart& chart) {
  std::uint64_t highest = chart.capacity_bytes;
  for (const ChartSeries& series : chart.series)
    for (const ChartPoint& p : series.points) highest = std::max(highest, p.total_bytes);
  // Room above the highest figure; gridlines every quarter of the axis.
  const double bytes_top = static_cast<double>(highest) * 1.1 + 1;
  const double height = kTop + kPanelHeight * static_cast<double>(chart.series.size()) + 10;

  std::string out;
  out += fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\" data-capacity-bytes=\"{2}\" data-ctx-end=\"{3}\">\n",
      kWidth, height, chart.capacity_bytes, chart.ctx_end);
  const std::string title = fmt::format("{} on {} ({}, batch {})", chart.model, chart.gpu, chart.runtime, chart.batch);
  out += fmt::format("  <title>{}</title>\n", escaped(title));
  out += fmt::format("  <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
  out += fmt::format("  <text x=\"{}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", kLeft - 50, escaped(title));
  // Legend.
  double lx = kLeft - 50;
  const auto swatch = [&](std::string_view color, std::string_view label) {
    out += fmt::format("  <rect x=\"{:.0f}\" y=\"40\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", lx, color);
    out += fmt::format("  <text x=\"{:.0f}\" y=\"50\">{}</text>\n", lx + 18, label);
    lx += 26 + 7.0 * static_cast<double>(label.size());
  };
  swatch(kWeightsColor, "weights");
  swatch(kKvColor, "KV cache");
  swatch(kOtherColor, "other (engine overhead)");
  out += fmt::format("  <line x1=\"{0:.0f}\" y1=\"45\" x2=\"{1:.0f}\" y2=\"45\" stroke=\"{2}\" stroke-width=\"2\" stroke-dasharray=\"6 3\"/>\n",
                     lx, lx + 22, kCapacityColor);
  out += fmt::format("  <text x=\"{:.0f}\" y=\"50\">capacity {}</text>\n", lx + 26, escaped(gib(chart.capacity_bytes)));
  out += fmt::format("  <text x=\"{}\" y=\"72\" fill=\"#444444\">Memory per GPU (the fullest) against context, in GiB (2^30 bytes); green: the largest context that fits</text>\n",
                     kLeft - 50);

  for (std::size_t d = 0; d < chart.series.size(); ++d) {
    const ChartSeries& series = chart.series[d];
    const Scale s{static_cast<double>(chart.ctx_end), bytes_top, kTop + kPanelHeight * static_cast<double>(d)};
    const std::string label = series.cache.label();
    out += fmt::format("  <g class=\"series\" data-kv-dtype=\"{}\" data-max-ctx=\"{}\">\n", escaped(label),
                       series.max_ctx ? std::to_string(*series.max_ctx) : std::string("none"));
    std::string caption = fmt::format("KV cache {}: ", label);
    if (!series.max_ctx) caption += "not even one token fits";
    else caption += fmt::format("fits up to {}{} tokens", series.max_ctx_is_search_limit ? "at least " : "", format_thousands(*series.max_ctx));
    out += fmt::format("    <text x=\"{}\" y=\"{:.0f}\" font-weight=\"bold\">{}</text>\n", kLeft, s.panel_top + 16, escaped(caption));
    // Gridlines and the GiB axis.
    for (int q = 0; q <= 4; ++q) {
      const auto bytes = static_cast<std::uint64_t>(bytes_top * q / 4);
      const double y = s.y(bytes);
      out += fmt::format("    <line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e0e0e0\"/>\n", kLeft, y, kRight, y);
      out += fmt::format("    <text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#444444\">{}</text>\n", kLeft - 6, y + 4,
                         format_gib_number(static_cast<std::int64_t>(bytes)));
    }
    // The context axis: ticks at quarters of the range.
    for (int q = 0; q <= 4; ++q) {
      const std::uint64_t ctx = chart.ctx_end / 4 * static_cast<std::uint64_t>(q);
      // The last label ends at the axis' end, so that it stays inside the picture.
      out += fmt::format("    <text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"{}\" fill=\"#444444\">{}</text>\n", s.x(ctx),
                         s.panel_top + kPlotTop + kPlotHeight + 16, q == 4 ? "end" : "middle", format_thousands(ctx));
    }
    out += fmt::format("    <text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\" fill=\"#444444\">context (tokens per sequence)</text>\n",
                       kRight, s.panel_top + kPlotTop + kPlotHeight + 32);
    if (!series.points.empty()) {
      out += band(series, s, "weights", kWeightsColor, [](const ChartPoint&) { return std::uint64_t{0}; },
                  [](const ChartPoint& p) { return p.weights_bytes; });
      out += band(series, s, "kv", kKvColor, [](const ChartPoint& p) { return p.weights_bytes; },
                  [](const ChartPoint& p) { return p.weights_bytes + p.kv_bytes; });
      out += band(series, s, "other", kOtherColor, [](const ChartPoint& p) { return p.weights_bytes + p.kv_bytes; },
                  [](const ChartPoint& p) { return p.total_bytes; });
      for (const ChartPoint& p : series.points)
        out += fmt::format(
            "    <circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\" fill=\"{}\" data-ctx=\"{}\" data-weights-bytes=\"{}\" "
            "data-kv-bytes=\"{}\" data-other-bytes=\"{}\" data-total-bytes=\"{}\"><title>ctx {}: weights {} + KV {} + other {} = {}"
            "</title></circle>\n",
            s.x(p.ctx), s.y(p.total_bytes), p.fits ? kFitColor : kCapacityColor, p.ctx, p.weights_bytes, p.kv_bytes, p.other_bytes,
            p.total_bytes, format_thousands(p.ctx), escaped(gib(p.weights_bytes)), escaped(gib(p.kv_bytes)), escaped(gib(p.other_bytes)),
            escaped(gib(p.total_bytes)));
    }
    const double cap_y = s.y(chart.capacity_bytes);
    out += fmt::format("    <line class=\"capacity\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\" "
                       "stroke-dasharray=\"6 3\" data-bytes=\"{}\"/>\n",
                       kLeft, cap_y, kRight, cap_y, kCapacityColor, chart.capacity_bytes);
    if (series.max_ctx && *series.max_ctx <= chart.ctx_end) {
      const double x = s.x(*series.max_ctx);
      out += fmt::format("    <line class=\"max-ctx\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
                         "stroke-width=\"2\" data-ctx=\"{4}\"/>\n",
                         x, s.panel_top + kPlotTop, s.panel_top + kPlotTop + kPlotHeight, kFitColor, *series.max_ctx);
      out += fmt::format("    <text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"{}\" fill=\"{}\">{}</text>\n", x + (x > kRight - 120 ? -4 : 4),
                         s.panel_top + kPlotTop + 12, x > kRight - 120 ? "end" : "start", kFitColor,
                         format_thousands(*series.max_ctx));
    }
    out += fmt::format("    <rect x=\"{}\" y=\"{:.0f}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888888\"/>\n", kLeft,
                       s.panel_top + kPlotTop, kRight - kLeft, kPlotHeight);
    out += "  </g>\n";
  }
  out += "</svg>\n";
  return out;
}

std::string format_chart_text(const MemoryChart& chart) {
  // Names from the model's files, escaped so that they cannot drive the terminal.
  std::string out = printable(fmt::format("{} on {} ({}, batch {}): memory per GPU against context; capacity {}", chart.model,
                                          chart.gpu, chart.runtime, chart.batch, gib(chart.capacity_bytes)),
                              1000) +
                    "\n";
  out += "Bars: weights █, KV ▓, other ▒ against the capacity (40 cells); ▶ past it.\n";
  for (const ChartSeries& series : chart.series) {
    out += fmt::format("\nKV cache {}: ", series.cache.label());
    out += series.max_ctx ? fmt::format("fits up to {}{} tokens\n", series.max_ctx_is_search_limit ? "at least " : "",
                                        format_thousands(*series.max_ctx))
                          : std::string("not even one token fits\n");
    const std::size_t step = std::max<std::size_t>(1, series.points.size() / 12);
    for (std::size_t i = step - 1; i < series.points.size(); i += step) {
      const ChartPoint& p = series.points[i];
      constexpr std::size_t kCells = 40;
      const double per_cell = static_cast<double>(std::max<std::uint64_t>(chart.capacity_bytes, 1)) / kCells;
      const auto cells = [&](std::uint64_t bytes) { return static_cast<std::size_t>(static_cast<double>(bytes) / per_cell + 0.5); };
      std::string bar;
      const std::size_t w = cells(p.weights_bytes);
      const std::size_t k = cells(p.weights_bytes + p.kv_bytes);
      const std::size_t t = cells(p.total_bytes);
      for (std::size_t c = 0; c < kCells; ++c) bar += c < w ? "█" : c < k ? "▓" : c < t ? "▒" : "·";
      out += fmt::format("{:>11}  [{}]{} {:>9}\n", format_thousands(p.ctx), bar, t > kCells ? "▶" : " ",
                         format_gib_number(static_cast<std::int64_t>(p.total_bytes)));
    }
  }
  return out;
}

}  // namespace kvplan
