/* The worker's image work with libvips: the server-side enhancement of a photo and the check
 * of a photo service's result. libvips runs on one thread here (the worker is one loop, and
 * a photo job should not take the machine's every core) with its operation cache off (a
 * long-running daemon sees every image once). Messages are ours: libvips' own text may quote
 * paths and is cleared. */
#include <string.h>

#include <vips/vips.h>

#include <apr_strings.h>

#include "jr_photo_jobs.h"
#include "jr_util.h"
#include "jw.h"

#define QUALITY 90
#define MIN_SPREAD 16 /* a photo whose levels span less is left unstretched (flat or blank) */

static int ready = -1;

static int vips_ready(void)
{
    if (ready < 0) {
        ready = VIPS_INIT("journal-worker") == 0;
        if (ready) {
            vips_concurrency_set(1);
            vips_cache_set_max(0);
        } else {
            JR_LOG(JR08012, 0, "libvips could not be initialised: photo jobs fail");
        }
    }
    return ready;
}

/* The media type of a file libvips can load, from its loader; NULL for other files. */
static const char *loader_type(const char *path)
{
    const char *loader = vips_foreign_find_load(path);
    if (!loader) {
        return NULL;
    }
    if (strstr(loader, "Jpeg")) {
        return "image/jpeg";
    }
    if (strstr(loader, "Png")) {
        return "image/png";
    }
    return strstr(loader, "Webp") ? "image/webp" : NULL;
}

static const char *fail(const char *why)
{
    vips_error_clear();
    return why;
}

const char *jw_vips_check(apr_pool_t *p, const char *path, const char **type, long long *width,
                          long long *height)
{
    VipsImage *img;
    double avg;
    const char *err = NULL;
    if (!vips_ready()) {
        return "the image library is not available";
    }
    if (!(*type = loader_type(path))) {
        return fail("the result is not a JPEG, PNG or WebP image");
    }
    if (!(img = vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on",
                                         VIPS_FAIL_ON_ERROR, NULL))) {
        return fail("the result is not a valid image");
    }
    *width = vips_image_get_width(img);
    *height = vips_image_get_height(img);
    if (*width < 1 || *height < 1 || *width > JR_PHOTO_MAX_SIDE || *height > JR_PHOTO_MAX_SIDE ||
        *width * *height > JR_PHOTO_MAX_PIXELS) {
        err = jr_psprintf(p, "the result's dimensions (%lldx%lld) are not plausible", *width,
                           *height);
    } else if (vips_avg(img, &avg, NULL) != 0) {
        err = "the result does not decode in full"; /* every pixel is read */
    }
    g_object_unref(img);
    return err ? fail(err) : NULL;
}

/* Levels: the 0.5 % darkest and brightest values become black and white, blended with the
 * original by strength. */
static int levels(VipsImage *in, VipsImage **out, double strength)
{
    int lo = 0, hi = 255;
    double scale, a, b;
    /* vips_percent: the value below which that percentage of the samples lie */
    if (vips_percent(in, 0.5, &lo, NULL) != 0 || vips_percent(in, 99.5, &hi, NULL) != 0) {
        return -1;
    }
    scale = hi - lo >= MIN_SPREAD ? 255.0 / (hi - lo) : 1.0;
    a = 1.0 + strength * (scale - 1.0);
    b = hi - lo >= MIN_SPREAD ? -strength * lo * scale : 0.0;
    return vips_linear1(in, out, a, b, "uchar", TRUE, NULL);
}

/* Mild sharpening: a 3x3 integer kernel (centre 16 + 4k, neighbours -k, scale 16) on the
 * 8-bit sRGB pixels, k from strength (0 to 4). An integer convolution on uchar is several
 * times cheaper than vips_sharpen's round trip through LabS, which took most of the time of
 * a 12-megapixel job. */
static int sharpen(VipsObject *scope, VipsImage *in, VipsImage **out, double strength)
{
    int k = (int)(strength * 4.0 + 0.5);
    VipsImage *mask;
    if (k == 0) {
        return vips_copy(in, out, NULL);
    }
    mask = vips_image_new_matrixv(3, 3, 0.0, (double)-k, 0.0, (double)-k, 16.0 + 4 * k,
                                  (double)-k, 0.0, (double)-k, 0.0);
    if (!mask) {
        return -1;
    }
    vips_object_local(scope, mask);
    vips_image_set_double(mask, "scale", 16.0);
    vips_image_set_double(mask, "offset", 0.0);
    return vips_conv(in, out, mask, "precision", VIPS_PRECISION_INTEGER, NULL);
}

static int save(VipsImage *img, const char *type, const char *out)
{
    if (!strcmp(type, "image/png")) {
        return vips_pngsave(img, out, "strip", TRUE, NULL);
    }
    if (!strcmp(type, "image/webp")) {
        return vips_webpsave(img, out, "Q", QUALITY, "strip", TRUE, NULL);
    }
    return vips_jpegsave(img, out, "Q", QUALITY, "strip", TRUE, NULL);
}

const char *jw_vips_enhance(apr_pool_t *p, const char *in, double strength, const char *out,
                            const char **type, long long *width, long long *height)
{
    VipsImage *base, **t;
    VipsArrayDouble *white;
    const char *err = NULL;
    int n = 0;

    if (!vips_ready()) {
        return "the image library is not available";
    }
    if (!(*type = loader_type(in))) {
        return fail("the photo is not a JPEG, PNG or WebP image");
    }
    base = vips_image_new();
    t = (VipsImage **)vips_object_local_array(VIPS_OBJECT(base), 10);
    white = vips_array_double_newv(1, 255.0);
    if (!(t[n++] = vips_image_new_from_file(in, "fail_on", VIPS_FAIL_ON_ERROR, NULL)) ||
        /* the orientation the camera recorded, applied to the pixels (the tag goes) */
        vips_autorot(t[n - 1], &t[n], NULL) != 0 || !++n ||
        (vips_image_hasalpha(t[n - 1]) &&
         (vips_flatten(t[n - 1], &t[n], "background", white, NULL) != 0 || !++n)) ||
        vips_colourspace(t[n - 1], &t[n], VIPS_INTERPRETATION_sRGB, NULL) != 0 || !++n ||
        vips_cast_uchar(t[n - 1], &t[n], NULL) != 0 || !++n ||
        /* decoded once: the histogram and the filters below read it again */
        !(t[n] = vips_image_copy_memory(t[n - 1])) || !++n ||
        levels(t[n - 1], &t[n], strength) != 0 || !++n ||
        sharpen(VIPS_OBJECT(base), t[n - 1], &t[n], strength) != 0 || !++n ||
        vips_cast_uchar(t[n - 1], &t[n], NULL) != 0 || !++n) {
        err = "the photo could not be read or enhanced";
    } else if (save(t[n - 1], *type, out) != 0) {
        err = "the enhanced photo could not be written";
    } else {
        *width = vips_image_get_width(t[n - 1]);
        *height = vips_image_get_height(t[n - 1]);
    }
    vips_area_unref(VIPS_AREA(white));
    g_object_unref(base);
    return err ? fail(err) : NULL;
}
