/*
 * migrations.h - platform.db's schema migrations (migrations.c), private
 * to libstore: store_migrations[i] is the SQL that moves user_version i
 * to i+1, store_nmigrations their count (store.h store_schema_version).
 */
#ifndef EXA_STORE_MIGRATIONS_H
#define EXA_STORE_MIGRATIONS_H

#include <stddef.h>

extern const char *const store_migrations[];
extern const size_t store_nmigrations;

#endif
