/* vstreamdeviceprovider's udev thread against a stopping monitor.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An application may stop its device monitor while the provider's thread
 * handles a uevent (a pipe added or deleted at that moment).  The test
 * catches the provider's GUdevClient (its g_udev_client_new() is this
 * file's, which calls the real one), has the thread handle an "add" and a
 * "remove" while stop() runs, and needs stop() to return (check's
 * timeout fails a hang).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gudev/gudev.h>

static GUdevClient *client;
static GMainContext *client_context;

GUdevClient *
g_udev_client_new (const gchar * const *subsystems)
{
  GUdevClient *(*real) (const gchar * const *) =
      dlsym (RTLD_NEXT, "g_udev_client_new");

  client = real (subsystems);
  client_context = g_main_context_get_thread_default ();
  return client;
}

/* In the provider's thread: wait until stop() is under way, then handle
 * an event for a node (any device will do: it is no vstream node). */
static gboolean
late_uevent (gpointer action)
{
  GUdevDevice *dev = g_udev_client_query_by_subsystem_and_name (client,
      "mem", "null");

  if (!dev)
    dev = g_udev_client_query_by_device_file (client, "/dev/null");
  fail_unless (dev != NULL);
  g_usleep (300 * 1000);
  g_signal_emit_by_name (client, "uevent", action, dev);
  g_object_unref (dev);
  return G_SOURCE_REMOVE;
}

static void
stop_during_uevent (const gchar * action)
{
  GstDeviceProvider *provider =
      gst_device_provider_factory_get_by_name ("vstreamdeviceprovider");
  GSource *source;

  fail_unless (provider != NULL);
  client = NULL;
  fail_unless (gst_device_provider_start (provider));
  fail_unless (client != NULL && client_context != NULL);
  source = g_idle_source_new ();
  g_source_set_callback (source, late_uevent, (gpointer) action, NULL);
  g_source_attach (source, client_context);
  g_source_unref (source);
  g_usleep (50 * 1000);
  gst_device_provider_stop (provider);
  gst_object_unref (provider);
}

GST_START_TEST (test_stop_during_add)
{
  stop_during_uevent ("add");
}

GST_END_TEST;

GST_START_TEST (test_stop_during_remove)
{
  stop_during_uevent ("remove");
}

GST_END_TEST;

static Suite *
provider_suite (void)
{
  Suite *s = suite_create ("vstream-provider");
  TCase *tc = tcase_create ("provider");

  tcase_set_timeout (tc, 20);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_stop_during_add);
  tcase_add_test (tc, test_stop_during_remove);
  return s;
}

/* The events need a device from sysfs: a chroot without /sys (the trixie
 * lanes' unit tests) has none, which is a SKIP, said. */
int
main (int argc, char **argv)
{
  if (!g_file_test ("/sys/class/mem/null", G_FILE_TEST_EXISTS)) {
    g_print ("SKIP: no /sys/class/mem/null (no sysfs mounted here)\n");
    return 77;
  }
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (provider_suite (), "provider", __FILE__);
}
