// The one markup escaper behind the HTML and JUnit views: both dialects
// escape the same five characters, and only XML rewrites what XML 1.0
// forbids (HTML output is byte-for-byte what it was before they merged).
#include "report/escape.hpp"

#include <gtest/gtest.h>

#include <string>

namespace uniperf::report {
namespace {

TEST(Escape, BothDialectsEscapeTheFiveMarkupCharacters) {
  EXPECT_EQ(escape_markup("<a b=\"c\">&'", Markup::html), "&lt;a b=&quot;c&quot;&gt;&amp;&#39;");
  EXPECT_EQ(escape_markup("<a b=\"c\">&'", Markup::xml), "&lt;a b=&quot;c&quot;&gt;&amp;&apos;");
}

TEST(Escape, OnlyXmlRewritesWhitespaceControlsAndBadUtf8) {
  const std::string text("tab\tnl\ncr\rbell\x07 bad\xC3( caf\xC3\xA9", 27);
  EXPECT_EQ(escape_markup(text, Markup::html), text);
  EXPECT_EQ(escape_markup(text, Markup::xml),
            "tab&#9;nl&#10;cr&#13;bell\xEF\xBF\xBD bad\xEF\xBF\xBD( caf\xC3\xA9");
}

}  // namespace
}  // namespace uniperf::report
