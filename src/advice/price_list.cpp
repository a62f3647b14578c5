// One's own prices for the advisor: a small JSON object or list, or CSV lines "id,price".

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "kvplan/advise.h"
#include "kvplan/error.h"
#include "loaders/json_reader.h"
#include "model/text.h"

namespace kvplan {

namespace {

constexpr std::size_t kMaxPrices = 4096;

double checked_price(double value, std::string_view origin, std::string_view where) {
  if (!std::isfinite(value) || value < 0 || value > 10'000)
    throw Error(fmt::format("{}: {}: a price is USD per GPU-hour, from 0 to 10,000", origin, where));
  return value;
}

double parse_csv_price(const std::string& text, std::string_view origin, std::size_t line) {
  const std::string where = fmt::format("line {}", line);
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw Error(fmt::format("{}: {}: '{}' is not a price", origin, where, text));
  return checked_price(value, origin, where);
}

std::vector<GivenPrice> parse_json_prices(std::string_view text, std::string_view origin) {
  const nlohmann::json doc = parse_json_document(text, origin);
  std::vector<GivenPrice> out;
  const auto number = [&](const nlohmann::json& value, const std::string& where) {
    if (!value.is_number()) throw Error(fmt::format("{}: {}: a price must be a number", origin, where));
    return checked_price(value.get<double>(), origin, where);
  };
  if (doc.is_object()) {
    for (const auto& [id, value] : doc.items()) out.push_back({id, number(value, fmt::format("'{}'", id))});
  } else if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i) {
      const nlohmann::json& entry = doc[i];
      const std::string where = fmt::format("entry {}", i + 1);
      if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_string() || !entry.contains("price"))
        throw Error(fmt::format("{}: {}: expected {{\"id\": ..., \"price\": ...}}", origin, where));
      out.push_back({entry["id"].get<std::string>(), number(entry["price"], where)});
    }
  } else {
    throw Error(fmt::format("{}: expected an object {{\"rtx4090\": 0.44}} or a list of {{\"id\", \"price\"}}", origin));
  }
  return out;
}

}  // namespace

std::vector<GivenPrice> parse_price_list(std::string_view text, std::string_view origin) {
  std::vector<GivenPrice> out;
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) throw Error(fmt::format("{}: no prices", origin));
  if (text[start] == '{' || text[start] == '[') {
    out = parse_json_prices(text, origin);
  } else {
    std::size_t line = 0;
    for (std::size_t at = 0; at < text.size();) {
      std::size_t end = text.find('\n', at);
      if (end == std::string_view::npos) end = text.size();
      const std::string content(trim(text.substr(at, end - at)));
      at = end + 1;
      ++line;
      if (content.empty() || content[0] == '#') continue;
      const std::size_t comma = content.find(',');
      if (comma == std::string::npos || content.find(',', comma + 1) != std::string::npos)
        throw Error(fmt::format("{}: line {}: expected 'id,price'", origin, line));
      const std::string id(trim(std::string_view(content).substr(0, comma)));
      const std::string price(trim(std::string_view(content).substr(comma + 1)));
      if (line == 1 && id == "id" && price == "price") continue;  // the header
      if (id.empty()) throw Error(fmt::format("{}: line {}: no GPU id", origin, line));
      out.push_back({id, parse_csv_price(price, origin, line)});
      if (out.size() > kMaxPrices) throw Error(fmt::format("{}: more than {} prices", origin, kMaxPrices));
    }
  }
  if (out.empty()) throw Error(fmt::format("{}: no prices", origin));
  if (out.size() > kMaxPrices) throw Error(fmt::format("{}: more than {} prices", origin, kMaxPrices));
  return out;
}

}  // namespace kvplan
