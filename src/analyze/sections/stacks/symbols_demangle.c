/* symbols_demangle.c — readable names for mangled C++ and Rust symbols.
 *
 * C++ (Itanium ABI, "_Z...") goes through libstdc++'s __cxa_demangle, found
 * at run time: first among the symbols already loaded, then by opening
 * libstdc++.so.6. A C program therefore links nothing more; without
 * libstdc++ on the machine names stay mangled. Rust "legacy" symbols are
 * Itanium-shaped: after __cxa_demangle their trailing hash segment
 * ("::h0123456789abcdef") is dropped and the escapes Rust puts in path
 * segments ($LT$, $GT$, $u20$, .. and friends) are decoded. Rust v0 symbols
 * ("_R...") are left as they are.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/stacks/symbols.h"

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* Found once per process (pthread_once: reports may be built on several
 * threads at once). */
static pthread_once_t once_demangler_guard = PTHREAD_ONCE_INIT;
static demangle_fn once_demangler;

static void find_once_demangler_guard(void) {
  void *p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
  if (!p) {
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h) p = dlsym(h, "__cxa_demangle"); /* the handle stays open for the process */
  }
  memcpy(&once_demangler, &p, sizeof once_demangler);
}

static demangle_fn find_demangler(void) {
  pthread_once(&once_demangler_guard, find_once_demangler_guard);
  return once_demangler;
}

static int is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

/* Rust legacy: "a::b::h<16 hex>" -> "a::b", escapes decoded, in place. */
static void rust_legacy(char *s) {
  size_t n = strlen(s);
  if (n > 19 && memcmp(s + n - 19, "::h", 3) == 0) {
    int hex = 1;
    for (size_t i = n - 16; i < n && hex; i++) hex = is_hex(s[i]);
    if (hex) s[n - 19] = 0;
  }
  static const struct {
    const char *from, *to;
  } esc[] = {{"$LT$", "<"}, {"$GT$", ">"}, {"$RF$", "&"}, {"$BP$", "*"}, {"$C$", ","},
             {"$SP$", "@"}, {"$u20$", " "}, {"$u27$", "'"}, {"$u5b$", "["}, {"$u5d$", "]"},
             {"$u7b$", "{"}, {"$u7d$", "}"}, {"$u3b$", ";"}, {"$u2b$", "+"}, {"$u22$", "\""}};
  char *w = s;
  for (const char *r = s; *r;) {
    int hit = 0;
    if (*r == '$')
      for (size_t k = 0; k < sizeof esc / sizeof esc[0] && !hit; k++) {
        size_t l = strlen(esc[k].from);
        if (strncmp(r, esc[k].from, l) == 0) {
          *w++ = esc[k].to[0];
          r += l;
          hit = 1;
        }
      }
    if (hit) continue;
    if (r[0] == '.' && r[1] == '.') { /* ".." is "::" in a path segment */
      *w++ = ':';
      *w++ = ':';
      r += 2;
      continue;
    }
    *w++ = *r++;
  }
  *w = 0;
}

/* A Rust legacy symbol ends its path with a 17-character "h<hash>" segment. */
static int looks_rust_legacy(const char *m) {
  size_t n = strlen(m);
  if (n < 22 || m[n - 1] != 'E') return 0;
  if (memcmp(m + n - 20, "17h", 3) != 0) return 0;
  for (size_t i = n - 17; i < n - 1; i++)
    if (!is_hex(m[i])) return 0;
  return 1;
}

char *prof__demangle(const char *name) {
  if (!name || name[0] != '_' || name[1] != 'Z') return NULL;
  demangle_fn fn = find_demangler();
  if (!fn) return NULL;
  int status = -1;
  char *out = fn(name, NULL, NULL, &status);
  if (status != 0 || !out) {
    free(out);
    return NULL;
  }
  if (looks_rust_legacy(name)) rust_legacy(out);
  return out;
}
