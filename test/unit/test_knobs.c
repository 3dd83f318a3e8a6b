/*
 * Unit test of the knob table (src/core/knobs.c): the parsers (included here to reach them),
 * UMPI_* loading with good and bad values, the table and the formatting.
 */
#include "core/knobs.c"
#include "unit.h"

int main(void)
{
    const char *why;
    size_t sz;
    int v;

    SECTION("sizes") {
        static const struct { const char *s; size_t v; } good[] = {
            { "0", 0 }, { "4096", 4096 }, { "64k", 65536 }, { "64K", 65536 }, { "1m", 1 << 20 },
            { "2M", 2u << 20 }, { "1g", 1ul << 30 }, { "3G", 3ul << 30 }, { "1t", 1ul << 40 },
            { "8kb", 8192 }, { "8KiB", 8192 }, { " 16k ", 16384 }, { "0x100", 256 },
        };
        for (size_t i = 0; i < UMPI_ARRAY_SIZE(good); i++)
            CHECK(umpi__parse_size(good[i].s, &sz, &why) == 0 && sz == good[i].v, "'%s' -> %zu", good[i].s, sz);
        static const char *const bad[] = { "", "k", "-1", "12q", "1.5m", "64kk", "99999999999999999999",
                                           "20000000000000000g" };
        for (size_t i = 0; i < UMPI_ARRAY_SIZE(bad); i++) {
            why = NULL;
            CHECK(umpi__parse_size(bad[i], &sz, &why) == -1 && why != NULL, "'%s' must fail", bad[i]);
        }
    }

    SECTION("integers") {
        CHECK(umpi__parse_int("42", &v, &why) == 0 && v == 42, "42");
        CHECK(umpi__parse_int("-7", &v, &why) == 0 && v == -7, "-7");
        CHECK(umpi__parse_int("0x10", &v, &why) == 0 && v == 16, "hex");
        CHECK(umpi__parse_int("3 ", &v, &why) == 0 && v == 3, "trailing blank");
        CHECK(umpi__parse_int("abc", &v, &why) == -1, "letters");
        CHECK(umpi__parse_int("", &v, &why) == -1, "empty");
        CHECK(umpi__parse_int("12x", &v, &why) == -1, "trailing junk");
        CHECK(umpi__parse_int("3000000000", &v, &why) == -1, "out of int range");
    }

    SECTION("booleans") {
        static const char *const yes[] = { "1", "yes", "YES", "on", "true", "True", "y" };
        static const char *const no[] = { "0", "no", "off", "OFF", "false", "n" };
        for (size_t i = 0; i < UMPI_ARRAY_SIZE(yes); i++)
            CHECK(umpi__parse_bool(yes[i], &v, &why) == 0 && v == 1, "'%s'", yes[i]);
        for (size_t i = 0; i < UMPI_ARRAY_SIZE(no); i++)
            CHECK(umpi__parse_bool(no[i], &v, &why) == 0 && v == 0, "'%s'", no[i]);
        CHECK(umpi__parse_bool("maybe", &v, &why) == -1, "maybe");
        CHECK(umpi__parse_bool("2", &v, &why) == -1, "2");
    }

    SECTION("table") {
        int n;
        const struct umpi_knob_info *t = umpi_knobs_table(&n);
        CHECK(n == UMPI__NKNOBS && n >= 1, "%d rows", n);
        int found = 0;
        for (int i = 0; i < n; i++) {
            CHECK(strncmp(t[i].name, "UMPI_", 5) == 0, "name '%s'", t[i].name);
            for (const char *p = t[i].name; *p; p++)
                CHECK(*p < 'a' || *p > 'z', "'%s' upper case", t[i].name);
            CHECK(t[i].doc && t[i].doc[0], "doc of %s", t[i].name);
            CHECK(t[i].default_str && t[i].type_name, "default/type of %s", t[i].name);
            if (strcmp(t[i].name, "UMPI_RNDV_THRESH") == 0) {
                found = 1;
                CHECK(t[i].type == UMPI_KNOB_SIZE && strcmp(t[i].type_name, "SIZE") == 0, "type");
                CHECK(t[i].value == &umpi_config.rndv_thresh, "value pointer");
                /* The text shown by umpi_info is the value compiled in (both come from the .def). */
                CHECK(strtoull(t[i].default_str, NULL, 0) == umpi_config.rndv_thresh, "default '%s' vs %zu",
                      t[i].default_str, umpi_config.rndv_thresh);
            }
        }
        CHECK(found, "UMPI_RNDV_THRESH in the table");
    }

    SECTION("loading from the environment") {
        int spin_default = umpi_config.spin_count;
        setenv("UMPI_RNDV_THRESH", "32k", 1);
        setenv("UMPI_DEBUG", "0", 1);
        setenv("UMPI_SPIN_COUNT", "lots", 1); /* bad: warned about, default kept */
        umpi_knobs_load();
        CHECK(umpi_config.rndv_thresh == 32768, "rndv_thresh %zu", umpi_config.rndv_thresh);
        CHECK(umpi_config.debug == 0, "debug %d", umpi_config.debug);
        CHECK(umpi_config.spin_count == spin_default, "bad value keeps the default (%d)", umpi_config.spin_count);
        setenv("UMPI_SPIN_COUNT", "50", 1);
        umpi_knobs_load();
        CHECK(umpi_config.spin_count == 50, "spin_count %d", umpi_config.spin_count);
    }

    SECTION("formatting") {
        int n;
        const struct umpi_knob_info *t = umpi_knobs_table(&n);
        char buf[64];
        for (int i = 0; i < n; i++) {
            umpi_knob_format(&t[i], buf, sizeof(buf));
            if (t[i].value == &umpi_config.rndv_thresh)
                CHECK(strcmp(buf, "32768") == 0, "'%s'", buf);
            if (t[i].value == &umpi_config.spin_count)
                CHECK(strcmp(buf, "50") == 0, "'%s'", buf);
        }
        /* every type formats, BOOL and STRING included, with rows made up for the test */
        int b = 1;
        const char *s = "ucx";
        struct umpi_knob_info kb = { "UMPI_X", UMPI_KNOB_BOOL, "BOOL", "0", "doc", &b };
        struct umpi_knob_info ks = { "UMPI_Y", UMPI_KNOB_STRING, "STRING", "\"\"", "doc", &s };
        umpi_knob_format(&kb, buf, sizeof(buf));
        CHECK(strcmp(buf, "yes") == 0, "bool '%s'", buf);
        umpi__knob_parse(&kb, "off");
        CHECK(b == 0, "bool parsed through the row");
        umpi__knob_parse(&ks, "tcp");
        umpi_knob_format(&ks, buf, sizeof(buf));
        CHECK(strcmp(buf, "tcp") == 0, "string '%s'", buf);
        s = NULL;
        umpi_knob_format(&ks, buf, sizeof(buf));
        CHECK(strcmp(buf, "") == 0, "NULL string '%s'", buf);
    }
    return unit_done("test_knobs");
}
