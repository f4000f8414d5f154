// Reading an HTML page in tests as a browser would build it (libxml2's HTML parser, which keeps
// going past elements it does not know, such as <svg> and <section>), then asking it questions
// with XPath: how many of these, what text, which attribute values. Also what every lab page
// must be: self-contained, with no absolute URL in any src or href.
#pragma once

#include <catch2/catch.hpp>
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>

#include <memory>
#include <string>
#include <vector>

namespace lab_test {

class HtmlDom {
public:
    explicit HtmlDom(const std::string& html)
        : doc_(htmlReadMemory(html.data(), static_cast<int>(html.size()), "page.html", "UTF-8",
                              HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET),
               xmlFreeDoc) {
        REQUIRE(doc_);
    }

    int count(const std::string& xpath) const { return static_cast<int>(nodes(xpath).size()); }

    // The text content of each node the expression selects (or the value, for attributes).
    std::vector<std::string> texts(const std::string& xpath) const {
        std::vector<std::string> out;
        for (xmlNodePtr n : nodes(xpath)) {
            xmlChar* t = xmlNodeGetContent(n);
            out.emplace_back(t ? reinterpret_cast<const char*>(t) : "");
            xmlFree(t);
        }
        return out;
    }
    std::string text(const std::string& xpath) const {
        auto t = texts(xpath);
        return t.empty() ? std::string() : t.front();
    }

private:
    std::vector<xmlNodePtr> nodes(const std::string& xpath) const {
        std::vector<xmlNodePtr> out;
        std::unique_ptr<xmlXPathContext, decltype(&xmlXPathFreeContext)> ctx(xmlXPathNewContext(doc_.get()), xmlXPathFreeContext);
        std::unique_ptr<xmlXPathObject, decltype(&xmlXPathFreeObject)> r(
            xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(xpath.c_str()), ctx.get()), xmlXPathFreeObject);
        INFO("xpath " << xpath);
        REQUIRE(r);
        if (r->nodesetval)
            for (int i = 0; i < r->nodesetval->nodeNr; ++i) out.push_back(r->nodesetval->nodeTab[i]);
        return out;
    }
    std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> doc_;
};

// What every page lab writes must be (html.hpp): nothing it would fetch or run, and no link that
// leaves the page's folder for another site.
inline void check_self_contained(const std::string& html) {
    HtmlDom dom(html);
    for (const char* element : {"script", "link", "img", "iframe", "object", "embed", "base", "form"}) {
        INFO("element <" << element << ">");
        CHECK(dom.count(std::string("//") + element) == 0);
    }
    for (const std::string& url : dom.texts("//@src | //@href | //@*[local-name()='href'] | //@action | //@srcset")) {
        INFO("link target " << url);
        CHECK(url.find("//") == std::string::npos);
        CHECK(url.find(':') == std::string::npos);  // no scheme: http:, https:, javascript:, data:, file:
    }
    CHECK(dom.count("//meta[@http-equiv='Content-Security-Policy' and starts-with(@content, \"default-src 'none'\")]") == 1);
    for (const std::string& css : dom.texts("//style")) {
        CHECK(css.find("@import") == std::string::npos);
        CHECK(css.find("url(") == std::string::npos);
    }
}

}  // namespace lab_test
