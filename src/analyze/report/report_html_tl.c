/* report_html_tl.c — the timeline of one step in the HTML report: the trace
 * is read again and every range (per thread, nested rows) and GPU activity
 * (per device and stream) overlapping the step becomes an SVG bar with its
 * details on hover. Bounded: bars narrower than the step / TL_MIN_FRAC are
 * skipped, at most TL_MAX_BARS are kept, and the page says how many were
 * left out.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/report/html.h"
#include "trace/rec_gpu.h"

#define TL_MAX_BARS 3000
#define TL_MAX_DEPTH 12
#define TL_STACK 64
#define TL_MAX_GPU_LANES 32
#define TL_MIN_FRAC 2500
#define TL_W 960
#define TL_LABEL 150
#define TL_ROW 14

enum { TLC_GPU_KERNEL = PROF_CAT_COUNT, TLC_GPU_COPY, TLC_GPU_SET };

typedef struct tl_bar {
  uint32_t lane, name;
  uint16_t depth;
  uint8_t cls;
  uint64_t b, e;
} tl_bar;

typedef struct tl_frame {
  uint32_t name;
  uint8_t cat;
  uint64_t begin;
} tl_frame;

typedef struct tl_th {
  tl_frame f[TL_STACK];
  uint32_t depth;
  uint64_t overflow, last;
} tl_th;

typedef struct tl {
  prof__an *an;
  uint64_t sb, se, minw;
  tl_th *th;
  tl_bar *bars;
  size_t nbars, skipped;
  uint64_t gpu_key[TL_MAX_GPU_LANES]; /* device << 32 | stream */
  size_t ngpu;
} tl;

static void add_bar(tl *t, uint32_t lane, uint32_t depth, int cls, uint32_t name, uint64_t b, uint64_t e) {
  if (e < t->sb || b > t->se) return;
  if (e - b < t->minw || depth >= TL_MAX_DEPTH || t->nbars >= TL_MAX_BARS) {
    t->skipped++;
    return;
  }
  t->bars[t->nbars++] = (tl_bar){lane, name, (uint16_t)depth, (uint8_t)cls, b < t->sb ? t->sb : b,
                                 e > t->se ? t->se : e};
}

static void on_range(tl *t, uint32_t ti, const prof__event *ev) {
  tl_th *h = &t->th[ti];
  uint64_t ts = ev->ts < h->last ? h->last : ev->ts;
  h->last = ts;
  if (ev->type == PROF_EV_RANGE_BEGIN) {
    if (h->depth == TL_STACK) h->overflow++;
    else h->f[h->depth++] = (tl_frame){ev->name, ev->cat < PROF_CAT_COUNT ? ev->cat : PROF_CAT_OTHER, ts};
    return;
  }
  if (h->overflow) {
    h->overflow--;
    return;
  }
  uint32_t k = h->depth, stop = k > 8 ? k - 8 : 0;
  while (k > stop && h->f[k - 1].name != ev->name) k--;
  if (k == stop) return;
  while (h->depth >= k) {
    tl_frame *f = &h->f[--h->depth];
    add_bar(t, ti, h->depth, f->cat, f->name, f->begin, ts);
  }
}

static uint32_t gpu_lane(tl *t, const prof__gpu_rec *r) {
  uint64_t key = (uint64_t)r->device << 32 | r->stream;
  for (size_t i = 0; i < t->ngpu; i++)
    if (t->gpu_key[i] == key) return (uint32_t)(t->an->nthreads + i);
  if (t->ngpu == TL_MAX_GPU_LANES) return UINT32_MAX;
  t->gpu_key[t->ngpu] = key;
  return (uint32_t)(t->an->nthreads + t->ngpu++);
}

static void on_gpu(tl *t, const prof__rec *rec) {
  prof__gpu_dec d;
  prof__gpu_rec r;
  if (prof__rec_gpu_dec_init(&d, rec->data, rec->len)) return;
  while (prof__rec_gpu_dec_next(&d, &r) == 1) {
    int cls = r.kind == PROF_GPU_KERNEL ? TLC_GPU_KERNEL : r.kind == PROF_GPU_MEMCPY ? TLC_GPU_COPY
            : r.kind == PROF_GPU_MEMSET ? TLC_GPU_SET : -1;
    if (cls < 0 || r.end < r.start || r.end < t->sb || r.start > t->se) continue;
    uint32_t lane = gpu_lane(t, &r);
    if (lane != UINT32_MAX) add_bar(t, lane, 0, cls, r.name, r.start, r.end);
  }
}

static int collect(tl *t) {
  prof__rec rec;
  int rc = prof__reader_rewind(t->an->reader);
  if (rc) return 0; /* no timeline, the rest of the report stands */
  while ((rc = prof__reader_next(t->an->reader, &rec)) == 1) {
    if (rec.kind == PROF_REC_CHUNK && rec.chunk_type == PROF_CHUNK_GPU) on_gpu(t, &rec);
    if (rec.kind != PROF_REC_EVENT) continue;
    if (rec.ev.type != PROF_EV_RANGE_BEGIN && rec.ev.type != PROF_EV_RANGE_END) continue;
    size_t ti = prof__an_thread_index(t->an, rec.tid);
    if (ti != SIZE_MAX && ti < t->an->nthreads) on_range(t, (uint32_t)ti, &rec.ev);
  }
  for (size_t i = 0; i < t->an->nthreads; i++) /* still open at the end */
    while (t->th[i].depth) {
      tl_frame *f = &t->th[i].f[--t->th[i].depth];
      add_bar(t, (uint32_t)i, t->th[i].depth, f->cat, f->name, f->begin, t->th[i].last);
    }
  (void)rc; /* a read error was already reported by the analysis: draw what was read */
  return 0;
}

/* ---- drawing ------------------------------------------------------------ */

static const char *cls_name(int cls) {
  if (cls < PROF_CAT_COUNT) return prof__an_cat_name(cls);
  return cls == TLC_GPU_KERNEL ? "kernel" : cls == TLC_GPU_COPY ? "memcpy" : "memset";
}

static void lane_label(tl *t, FILE *out, uint32_t lane, char *buf, size_t n) {
  (void)out;
  if (lane < t->an->nthreads) {
    const prof__thread_info *th = &t->an->threads[lane];
    if (th->name && *th->name) snprintf(buf, n, "%.40s (%u)", th->name, th->tid);
    else snprintf(buf, n, "thread %u", th->tid);
  } else {
    uint64_t k = t->gpu_key[lane - t->an->nthreads];
    snprintf(buf, n, "GPU %u stream %u", (unsigned)(k >> 32), (unsigned)(k & 0xffffffffu));
  }
}

static void draw_bar(tl *t, FILE *out, const tl_bar *b, double y, double scale) {
  char d[32];
  double x = TL_LABEL + (double)(b->b - t->sb) * scale, w = (double)(b->e - b->b) * scale;
  fprintf(out, "<rect class=\"tl c-%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\"><title>",
          cls_name(b->cls), x, y + b->depth * TL_ROW, w < 0.5 ? 0.5 : w, TL_ROW - 2);
  prof__html_esc(out, prof__an_str(t->an, b->name));
  fprintf(out, " (%s) %s, at +%s</title></rect>\n", cls_name(b->cls), prof__an_fmt_ns(d, sizeof d, b->e - b->b),
          prof__an_fmt_ns((char[32]){0}, 32, b->b - t->sb));
}

static void draw(tl *t, FILE *out, size_t nlanes, const uint32_t *order, const int *rows) {
  double y = 22, scale = (double)(TL_W - TL_LABEL) / (double)(t->se - t->sb ? t->se - t->sb : 1);
  int h = 30;
  for (size_t i = 0; i < nlanes; i++) h += rows[order[i]] * TL_ROW + 6;
  fprintf(out, "<figure class=\"chart\"><svg class=\"timeline\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "aria-label=\"timeline of the median step\" xmlns=\"http://www.w3.org/2000/svg\">\n", TL_W, h);
  for (int i = 0; i <= 4; i++) {
    char d[32];
    double x = TL_LABEL + (TL_W - TL_LABEL - 1) * i / 4.0;
    fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"14\" y2=\"%d\"/><text class=\"tick\" x=\"%.1f\" "
                 "y=\"11\" text-anchor=\"%s\">+%s</text>\n",
            x, x, h, x, i == 0 ? "start" : i == 4 ? "end" : "middle",
            prof__an_fmt_ns(d, sizeof d, (t->se - t->sb) * (uint64_t)i / 4));
  }
  for (size_t i = 0; i < nlanes; i++) {
    uint32_t lane = order[i];
    char label[80];
    lane_label(t, out, lane, label, sizeof label);
    fprintf(out, "<text class=\"lane\" x=\"2\" y=\"%.1f\">", y + 11);
    prof__html_esc(out, label);
    fputs("</text>\n", out);
    for (size_t k = 0; k < t->nbars; k++)
      if (t->bars[k].lane == lane) draw_bar(t, out, &t->bars[k], y, scale);
    y += rows[lane] * TL_ROW + 6;
  }
  fputs("</svg><figcaption>", out);
  for (int c = 0; c <= TLC_GPU_SET; c++) {
    if (c >= PROF_CAT_COUNT && !t->ngpu) break;
    fprintf(out, "<span class=\"key\"><i class=\"c-%s\"></i>%s</span>", cls_name(c), cls_name(c));
  }
  fputs("</figcaption></figure>\n", out);
}

static void render(tl *t, FILE *out) {
  size_t nl = t->an->nthreads + t->ngpu;
  int *rows = calloc(nl + 1, sizeof *rows);
  uint32_t *order = malloc((nl + 1) * sizeof *order);
  if (!rows || !order) goto done;
  for (size_t k = 0; k < t->nbars; k++)
    if (t->bars[k].depth + 1 > rows[t->bars[k].lane]) rows[t->bars[k].lane] = t->bars[k].depth + 1;
  size_t n = 0;
  uint32_t step_tid = t->an->steps[0].tid;
  for (size_t i = 0; i < t->an->nthreads; i++) /* the step thread first */
    if (t->an->threads[i].tid == step_tid && rows[i]) order[n++] = (uint32_t)i;
  for (size_t i = 0; i < nl; i++)
    if (rows[i] && !(i < t->an->nthreads && t->an->threads[i].tid == step_tid)) order[n++] = (uint32_t)i;
  if (n) draw(t, out, n, order, rows);
  else fputs("<p>No ranges were open during this step.</p>\n", out);
done:
  free(rows);
  free(order);
}

int prof__html_timeline(prof__an *an, FILE *out, long step) {
  if (step < 0 || (size_t)step >= an->nsteps) return 0;
  const prof__step *s = &an->steps[step];
  tl t = {.an = an, .sb = s->begin_ns, .se = s->end_ns};
  t.minw = (t.se - t.sb) / TL_MIN_FRAC;
  t.th = calloc(an->nthreads + 1, sizeof *t.th);
  t.bars = malloc(TL_MAX_BARS * sizeof *t.bars);
  int rc = t.th && t.bars ? collect(&t) : PROF_ENOMEM;
  if (rc == 0) {
    char d[32];
    char title[96];
    snprintf(title, sizeof title, "Timeline of step %llu (the median step, %s)", (unsigned long long)s->number,
             prof__an_fmt_ns(d, sizeof d, t.se - t.sb));
    prof__html_section_begin(out, "timeline", title);
    render(&t, out);
    if (t.skipped)
      fprintf(out, "<p class=\"note\">%zu short or deeply nested bars are not drawn (the Chrome export has every "
                   "event).</p>\n", t.skipped);
    prof__html_section_end(out);
  }
  free(t.th);
  free(t.bars);
  return rc;
}
