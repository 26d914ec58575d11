/* devices.c: the device table: recording a GPU, reading one or all of
 * them back. */
#include <stdlib.h>
#include <string.h>
#include "db_internal.h"

/* id of the device of that UUID; AT_ERR_NOT_FOUND if unknown. */
at_status db_device_id(db *d, const char *uuid, long long *id)
{
    if (!uuid)
        return db_fail(d, AT_ERR_INVALID_ARG, "device UUID is NULL");
    at_status s = db_query_int(d, "SELECT id FROM device WHERE uuid = ?1", uuid,
                               id, "looking up a device");
    if (s == AT_OK && *id == 0)
        return db_fail(d, AT_ERR_NOT_FOUND,
                       "device %s is not recorded (db_put_device first)", uuid);
    return s;
}

/* ---- devices ---- */

at_status db_write_device(db *d, const at_device_info *info, const char *arch,
                          const char *nvrtc_version, const char *first_seen,
                          const char *last_seen, int only_if_newer)
{
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st,
        "INSERT INTO device (uuid, name, arch, ordinal, cc_major, cc_minor, sm_count, "
        "memory_bytes, l2_bytes, smem_per_block_optin, smem_per_sm, regs_per_block, "
        "regs_per_sm, max_threads_per_block, max_threads_per_sm, clock_khz, "
        "mem_clock_khz, mem_bus_bits, driver_version, nvrtc_version, first_seen, "
        "last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
        "?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22) "
        "ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, arch = excluded.arch, "
        "ordinal = excluded.ordinal, cc_major = excluded.cc_major, "
        "cc_minor = excluded.cc_minor, sm_count = excluded.sm_count, "
        "memory_bytes = excluded.memory_bytes, l2_bytes = excluded.l2_bytes, "
        "smem_per_block_optin = excluded.smem_per_block_optin, "
        "smem_per_sm = excluded.smem_per_sm, regs_per_block = excluded.regs_per_block, "
        "regs_per_sm = excluded.regs_per_sm, "
        "max_threads_per_block = excluded.max_threads_per_block, "
        "max_threads_per_sm = excluded.max_threads_per_sm, "
        "clock_khz = excluded.clock_khz, mem_clock_khz = excluded.mem_clock_khz, "
        "mem_bus_bits = excluded.mem_bus_bits, driver_version = excluded.driver_version, "
        "nvrtc_version = excluded.nvrtc_version, last_seen = excluded.last_seen "
        "WHERE ?23 = 0 OR excluded.last_seen > device.last_seen");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, info->uuid);
    db_bind_text(st, 2, info->name);
    db_bind_text(st, 3, arch);
    const long long v[] = {
        info->ordinal, info->cc_major, info->cc_minor, info->sm_count, info->memory_bytes,
        info->l2_bytes, info->smem_per_block_optin, info->smem_per_sm, info->regs_per_block,
        info->regs_per_sm, info->max_threads_per_block, info->max_threads_per_sm,
        info->clock_khz, info->mem_clock_khz, info->mem_bus_bits, info->driver_version,
    };
    for (int k = 0; k < (int)(sizeof v / sizeof v[0]); k++)
        sqlite3_bind_int64(st, 4 + k, v[k]);
    db_bind_text(st, 20, nvrtc_version ? nvrtc_version : "");
    db_bind_text(st, 21, first_seen);
    db_bind_text(st, 22, last_seen);
    sqlite3_bind_int(st, 23, only_if_newer);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "recording a device");
    return AT_OK;
}

at_status db_put_device(db *d, const at_device_info *info, const char *nvrtc_version)
{
    if (!d || !info || !info->uuid[0])
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_put_device: no device or UUID")
                 : AT_ERR_INVALID_ARG;
    at_status s = db_check_writable(d, "recording a device");
    if (s != AT_OK)
        return s;
    char arch[16], now[32];
    tpl_arch_name(info->cc_major, info->cc_minor, arch, sizeof arch);
    db_now(now, sizeof now);
    return db_write_device(d, info, arch, nvrtc_version, now, now, 0);
}

#define DEVICE_COLS \
    "id, uuid, name, arch, ordinal, cc_major, cc_minor, sm_count, memory_bytes, " \
    "l2_bytes, smem_per_block_optin, smem_per_sm, regs_per_block, regs_per_sm, " \
    "max_threads_per_block, max_threads_per_sm, clock_khz, mem_clock_khz, " \
    "mem_bus_bits, driver_version, nvrtc_version"

static void db_read_device(sqlite3_stmt *st, db_device *out)
{
    memset(out, 0, sizeof *out);
    at_device_info *i = &out->info;
    out->id = sqlite3_column_int64(st, 0);
    db_col_text(st, 1, i->uuid, sizeof i->uuid);
    db_col_text(st, 2, i->name, sizeof i->name);
    db_col_text(st, 3, i->arch, sizeof i->arch);
    i->ordinal = sqlite3_column_int(st, 4);
    i->cc_major = sqlite3_column_int(st, 5);
    i->cc_minor = sqlite3_column_int(st, 6);
    i->sm_count = sqlite3_column_int(st, 7);
    i->memory_bytes = sqlite3_column_int64(st, 8);
    i->l2_bytes = sqlite3_column_int(st, 9);
    i->smem_per_block_optin = sqlite3_column_int(st, 10);
    i->smem_per_sm = sqlite3_column_int(st, 11);
    i->regs_per_block = sqlite3_column_int(st, 12);
    i->regs_per_sm = sqlite3_column_int(st, 13);
    i->max_threads_per_block = sqlite3_column_int(st, 14);
    i->max_threads_per_sm = sqlite3_column_int(st, 15);
    i->clock_khz = sqlite3_column_int(st, 16);
    i->mem_clock_khz = sqlite3_column_int(st, 17);
    i->mem_bus_bits = sqlite3_column_int(st, 18);
    i->driver_version = sqlite3_column_int(st, 19);
    db_col_text(st, 20, out->nvrtc_version, sizeof out->nvrtc_version);
}

at_status db_get_device(db *d, const char *uuid, db_device *out)
{
    if (!d || !uuid || !out)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_get_device: NULL argument")
                 : AT_ERR_INVALID_ARG;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT " DEVICE_COLS " FROM device WHERE uuid = ?1");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, uuid);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        db_read_device(st, out);
    else if (rc == SQLITE_DONE)
        s = db_fail(d, AT_ERR_NOT_FOUND, "device %s is not recorded", uuid);
    else
        s = db_sqlfail(d, rc, "reading a device");
    sqlite3_finalize(st);
    return s;
}

at_status db_list_devices(db *d, db_device **out, int *count)
{
    if (!d || !out || !count)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_list_devices: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT " DEVICE_COLS " FROM device ORDER BY id");
    if (s != AT_OK)
        return s;
    db_device *arr = NULL;
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!db_grow((void **)&arr, &cap, n, sizeof *arr)) {
            s = db_fail(d, AT_ERR_NO_MEMORY, "out of memory listing devices");
            break;
        }
        db_read_device(st, &arr[n++]);
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = db_sqlfail(d, rc, "listing devices");
    sqlite3_finalize(st);
    if (s != AT_OK) {
        free(arr);
        return s;
    }
    *out = arr;
    *count = n;
    return AT_OK;
}
