#include "report/escape.hpp"

namespace uniperf::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

/// Length of the valid UTF-8 sequence at text[at], 0 if it is not one
/// (overlong forms, surrogates and values past U+10FFFF are not).
std::size_t utf8_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  std::uint32_t code = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(at + i) & 0x3F);
  }
  if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000) || code > 0x10FFFF ||
      (code >= 0xD800 && code <= 0xDFFF) || code == 0xFFFE || code == 0xFFFF) {
    return 0;
  }
  return length;
}

}  // namespace

std::string escape_markup(std::string_view text, Markup markup) {
  const bool xml = markup == Markup::xml;
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const char c = text[at];
    const std::size_t length = xml ? utf8_length(text, at) : 1;
    if (length == 0) {
      out += kReplacement;
      ++at;
      continue;
    }
    at += length;
    if (length > 1) {
      out.append(text.substr(at - length, length));
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += xml ? "&apos;" : "&#39;";
        continue;
      default:
        break;
    }
    if (!xml) {
      out += c;
    } else if (c == '\t') {
      out += "&#9;";
    } else if (c == '\n') {
      out += "&#10;";
    } else if (c == '\r') {
      out += "&#13;";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      out += kReplacement;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace uniperf::report
