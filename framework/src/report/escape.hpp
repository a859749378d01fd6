// Text made safe for the markup views: one escaper for HTML and XML, which
// differ only in the apostrophe's entity and in XML's stricter character
// rules (JUnit consumers reject what XML 1.0 forbids).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace uniperf::report {

enum class Markup : std::uint8_t {
  /// & < > " ' become entities (' as &#39;, which HTML 4 also knows);
  /// everything else is kept as is.
  html,
  /// As html, ' as &apos;; tab, LF and CR become character references
  /// (attribute values would normalise them to spaces); bytes that are not
  /// UTF-8 and the controls XML 1.0 forbids become U+FFFD.
  xml
};

std::string escape_markup(std::string_view text, Markup markup);

/// escape_markup(text, Markup::html): HTML content and attribute values.
inline std::string html_escape(std::string_view text) {
  return escape_markup(text, Markup::html);
}

/// escape_markup(text, Markup::xml): XML 1.0 character data and attributes.
inline std::string xml_escape(std::string_view text) {
  return escape_markup(text, Markup::xml);
}

}  // namespace uniperf::report
