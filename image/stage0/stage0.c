// stage0: the initramfs's /init, and all it does: attaches the system image (a squashfs
// file in the initramfs) to a loop device, mounts it read-only at /system/image and
// executes the real init from it as the same PID 1, with the kernel's arguments and
// environment. Why: what the kernel unpacks stays in RAM for the machine's life and is
// never reclaimable. Unpacked, the executable alone was 87 MB of it; kept compressed, the
// image costs its compressed size, and the executable's pages are read, decompressed and
// cached only when some process touches them (the kernel can drop them again).
// Nothing here but syscalls; the TypeScript init does everything else.
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define IMAGE "/system.squashfs"
#define MOUNT_DIR "/system/image"
#define INIT MOUNT_DIR "/init"
// A private node: devtmpfs is not mounted yet (the real init mounts /dev), and the mount
// keeps the device once the node is gone.
#define LOOP_NODE "/system/.loop0"

// One line on the console: "stage0: <what><path>: <why>". PID 1 returning makes the
// kernel panic (and reboot when panic= says so), so this line comes first and names the cause.
static int fail(const char *what, const char *path) {
  const char *parts[] = {"stage0: ", what, path, ": ", strerror(errno), "\n"};
  for (unsigned i = 0; i < sizeof parts / sizeof *parts; i++) {
    if (write(2, parts[i], strlen(parts[i])) < 0) break;
  }
  return 1;
}

int main(int argc, char **argv, char **envp) {
  (void)argc;
  int image = open(IMAGE, O_RDONLY | O_CLOEXEC);
  if (image < 0) return fail("cannot open the system image ", IMAGE);
  if (mknod(LOOP_NODE, S_IFBLK | 0600, makedev(7, 0)) < 0 && errno != EEXIST) {
    return fail("cannot make the loop device node ", LOOP_NODE);
  }
  int loop = open(LOOP_NODE, O_RDWR | O_CLOEXEC);
  if (loop < 0) return fail("cannot open the loop device ", LOOP_NODE);
  struct loop_config config;
  memset(&config, 0, sizeof config);
  config.fd = (unsigned)image;
  config.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
  strncpy((char *)config.info.lo_file_name, IMAGE, LO_NAME_SIZE - 1);
  if (ioctl(loop, LOOP_CONFIGURE, &config) < 0) return fail("cannot attach the system image to ", LOOP_NODE);
  if (mount(LOOP_NODE, MOUNT_DIR, "squashfs", MS_RDONLY | MS_NODEV | MS_NOSUID, NULL) < 0) {
    return fail("cannot mount the system image on ", MOUNT_DIR);
  }
  // The mount holds the loop device (and, through it, the image): none of these is needed now.
  close(loop);
  close(image);
  unlink(LOOP_NODE);
  argv[0] = INIT;
  execve(INIT, argv, envp);
  return fail("cannot execute ", INIT);
}
