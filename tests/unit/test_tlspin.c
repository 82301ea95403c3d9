/*
 * test_tlspin.c - the public-key pin of a certificate (libutil/tlspin.h)
 * against what openssl(1) prints for the fixtures of tests/fixtures/tls/
 * (README.md there: the command line), the key/certificate checks and
 * the pin syntax check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libutil/tlspin.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "testutil.h"

static char *fixture(const char *name)
{
    char path[256];
    char *s;
    xsnprintf(path, sizeof(path), "tests/fixtures/tls/%s", name);
    s = tu_read_file(path, NULL);
    assert_non_null(s);
    return s;
}

/* the expected pin: the file's first line */
static char *expected(const char *name)
{
    char *s = fixture(name);
    s[strcspn(s, "\n")] = '\0';
    return s;
}

static void test_pin_matches_openssl(void **state)
{
    static const char *const n[] = {"a", "b"};
    for (size_t i = 0; i < 2; i++) {
        char f[32], out[TLSPIN_LEN];
        char *cert, *key, *want;
        exa_error_t err = EXA_ERROR_INIT;
        xsnprintf(f, sizeof(f), "%s-cert.pem", n[i]);
        cert = fixture(f);
        xsnprintf(f, sizeof(f), "%s-key.pem", n[i]);
        key = fixture(f);
        xsnprintf(f, sizeof(f), "%s-pin.txt", n[i]);
        want = expected(f);
        memset(out, 'x', sizeof(out));
        assert_int_equal(tlspin_from_pem(cert, key, "cert", "key", out, &err),
                         0);
        assert_string_equal(out, want);
        assert_int_equal(strlen(out), TLSPIN_LEN - 1);
        assert_true(tlspin_valid(out));
        /* without the key: the same pin */
        assert_int_equal(tlspin_from_pem(cert, NULL, "cert", "key", out, &err),
                         0);
        assert_string_equal(out, want);
        free(cert);
        free(key);
        free(want);
    }
}

static void test_key_mismatch_and_garbage(void **state)
{
    char *ca = fixture("a-cert.pem"), *kb = fixture("b-key.pem");
    char out[TLSPIN_LEN];
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(tlspin_from_pem(ca, kb, "--c 'a'", "--k 'b'", out, &err),
                     -1);
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_string_equal(err.text,
                        "--k 'b': does not match the certificate --c 'a'");
    assert_int_equal(tlspin_from_pem(kb, NULL, "--c 'k'", "--k", out, &err),
                     -1);
    assert_string_equal(err.text, "--c 'k': not a PEM certificate");
    assert_int_equal(
        tlspin_from_pem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END "
                        "CERTIFICATE-----\n",
                        NULL, "c", "k", out, &err),
        -1);
    assert_string_equal(err.text, "c: not a PEM certificate");
    assert_int_equal(tlspin_from_pem(ca, ca, "c", "--k 'x'", out, &err), -1);
    assert_string_equal(err.text,
                        "--k 'x': not a PEM private key (or it is encrypted)");
    assert_int_equal(tlspin_from_pem("", NULL, "c", "k", out, &err), -1);
    free(ca);
    free(kb);
}

static void test_valid(void **state)
{
    const char *p = "sha256//gSGrAM/wMRhk/XNbIcb1KYRhEY+HpRfWI905jcE5AGY=";
    char two[200];
    xsnprintf(two, sizeof(two), "%s;%s", p, p);
    assert_true(tlspin_valid(p));
    assert_true(tlspin_valid(two));
    assert_false(tlspin_valid(NULL));
    assert_false(tlspin_valid(""));
    assert_false(tlspin_valid("sha256//"));
    assert_false(tlspin_valid("sha256//abc="));
    assert_false(tlspin_valid("/etc/pin.der"));
    assert_false(
        tlspin_valid("sha1//gSGrAM/wMRhk/XNbIcb1KYRhEY+HpRfWI905jcE5AGY="));
    /* a character outside base64, no padding, trailing ';', too long */
    assert_false(
        tlspin_valid("sha256//gSGrAM/wMRhk/XNbIcb1KYRhEY+HpRfWI905jcE5AG-="));
    assert_false(
        tlspin_valid("sha256//gSGrAM/wMRhk/XNbIcb1KYRhEY+HpRfWI905jcE5AGYY"));
    xsnprintf(two, sizeof(two), "%s;", p);
    assert_false(tlspin_valid(two));
    xsnprintf(two, sizeof(two), "%sA", p);
    assert_false(tlspin_valid(two));
    xsnprintf(two, sizeof(two),
              "sha256//PbPbn5sKPIt7zdm8Qj1GAaL+qvkkMU1bWrsRIArkJWc=;%s", p);
    assert_true(tlspin_list_has(two, p));
    assert_true(tlspin_list_has(p, p));
    assert_false(tlspin_list_has(
        "sha256//PbPbn5sKPIt7zdm8Qj1GAaL+qvkkMU1bWrsRIArkJWc=", p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pin_matches_openssl),
        cmocka_unit_test(test_key_mismatch_and_garbage),
        cmocka_unit_test(test_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
