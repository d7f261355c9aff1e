/* shortname.h — C++ function names made short enough to read in a line of
 * the text report: template arguments and parameter lists are elided
 * ("std::_Hashtable<…>::_M_insert_unique<…>(…)"); the JSON keeps the full
 * name. */
#ifndef MLPROF_ANALYZE_SHORTNAME_H
#define MLPROF_ANALYZE_SHORTNAME_H

#include <stddef.h>

/* Write `name` into out (n >= 1 bytes, always terminated) with each
 * top-level template argument list shown as "<…>" and a non-empty
 * parameter list as "(…)". "(anonymous namespace)", operator names
 * ("operator<<", "operator()") and names that are not C++ are kept.
 * Returns out. */
const char *prof__short_name(const char *name, char *out, size_t n);

#endif
