/* html.h: writes the report document (page, contents, device facts, summary
 * table, a section per tuned problem) from the collected figures. */
#ifndef RP_HTML_H
#define RP_HTML_H

#include "calls.h"
#include "figures.h"
#include "text.h"

/* Appends the whole HTML document of rep to b; generated is the time shown
 * as the report's date; the random calls' files (n_calls of them, none with 0) follow the
 * first screen's table. Out of memory leaves b->oom set. */
void rp_render_html(rp_buf *b, const rp_report *rep, const char *generated,
                    const rp_calls *calls, int n_calls);

#endif
