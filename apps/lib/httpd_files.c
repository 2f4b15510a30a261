/**
 * @file httpd_files.c
 * The compiled-in file table of the HTTP server (httpd.h): a small HTML
 * page, a style sheet, a 1 MiB file generated on the fly (no 1 MB array in
 * flash) and the two status pages. The constant files are sent straight
 * from here without copying.
 */
#include "httpd.h"

static const char index_html[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\">\n"
    "<head>\n"
    "<meta charset=\"utf-8\">\n"
    "<title>wisp</title>\n"
    "<link rel=\"stylesheet\" href=\"/style.css\">\n"
    "</head>\n"
    "<body>\n"
    "<h1>wisp</h1>\n"
    "<p>A lightweight TCP/IP stack for microcontrollers, serving this page from\n"
    "a table compiled into the program.</p>\n"
    "<ul>\n"
    "<li><a href=\"/status\">status</a> (<a href=\"/status.json\">JSON</a>): interfaces,\n"
    "TCP connections, pools and drop counters, live</li>\n"
    "<li><a href=\"/big.bin\">big.bin</a>: 1 MiB generated on the fly</li>\n"
    "</ul>\n"
    "</body>\n"
    "</html>\n";

static const char style_css[] =
    "body { font-family: sans-serif; margin: 2em; color: #222; background: #fdfdfd; }\n"
    "h1 { font-size: 1.6em; border-bottom: 1px solid #ccc; }\n"
    "h2 { font-size: 1.2em; margin-top: 1.5em; }\n"
    "table { border-collapse: collapse; }\n"
    "th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }\n"
    "th { background: #eee; }\n"
    "td:first-child, th:first-child { text-align: left; }\n";

void wisp_httpd_big_gen(uint32_t off, uint8_t *dst, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++, off++) {
        uint32_t w = (off / 4u) * 0x9E3779B1u + 0x7F4A7C15u;
        dst[i] = (uint8_t)(w >> (24u - 8u * (off % 4u)));
    }
}

static const struct wisp_httpd_file files[] = {
    { "/index.html", "text/html; charset=utf-8", WISP_HTTPD_ROM, (const uint8_t *)index_html,
      (uint32_t)(sizeof index_html - 1u), NULL },
    { "/style.css", "text/css; charset=utf-8", WISP_HTTPD_ROM, (const uint8_t *)style_css,
      (uint32_t)(sizeof style_css - 1u), NULL },
    { "/big.bin", "application/octet-stream", WISP_HTTPD_GEN, NULL, WISP_HTTPD_BIG_LEN, wisp_httpd_big_gen },
    { "/status", "text/html; charset=utf-8", WISP_HTTPD_STATUS_HTML, NULL, 0, NULL },
    { "/status.json", "application/json", WISP_HTTPD_STATUS_JSON, NULL, 0, NULL },
};

const struct wisp_httpd_file *wisp_httpd_files(unsigned *n)
{
    *n = (unsigned)(sizeof files / sizeof files[0]);
    return files;
}
