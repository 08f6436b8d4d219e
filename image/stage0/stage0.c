// stage0: the initramfs's /init, and all it does: attaches the system image (a squashfs
// file in the initramfs) to a loop device, mounts it read-only at /system/image and
// executes the real init from it as the same PID 1, with the kernel's arguments and
// environment. Why: what the kernel unpacks stays in RAM for the machine's life and is
// never reclaimable. Unpacked, the executable alone was 87 MB of it; kept compressed, the
// image costs its compressed size, and the executable's pages are read, decompressed and
// cached only when some process touches them (the kernel can drop them again).
// Nothing here but syscalls; the TypeScript init does everything else. No C library
// either (x86-64 syscalls made directly, `_start` below): a static glibc was 270 KB of
// the compressed initramfs for six calls.
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/mount.h>
#include <linux/stat.h>

#define IMAGE "/system.squashfs"
#define MOUNT_DIR "/system/image"
#define INIT MOUNT_DIR "/init"
// A private node: devtmpfs is not mounted yet (the real init mounts /dev), and the mount
// keeps the device once the node is gone.
#define LOOP_NODE "/system/.loop0"
#define LOOP_DEVICE ((7u << 8) | 0u) // block 7:0, as the kernel encodes dev_t for mknod

// x86-64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl).
enum { SYS_write = 1, SYS_close = 3, SYS_ioctl = 16, SYS_execve = 59, SYS_mount = 165, SYS_exit_group = 231,
  SYS_openat = 257, SYS_mknodat = 259, SYS_unlinkat = 263 };
#define AT_CWD (-100)

// A system call: the result, or -errno as the kernel returns it.
static long sys(long n, long a, long b, long c, long d, long e) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
  return ret;
}

static unsigned long length(const char *s) {
  unsigned long n = 0;
  while (s[n]) n++;
  return n;
}

// The errors these calls can meet, by name; others by number.
static const char *why(long err) {
  switch (err) {
    case ENOENT: return "No such file or directory";
    case EACCES: return "Permission denied";
    case EPERM: return "Operation not permitted";
    case EEXIST: return "File exists";
    case ENXIO: return "No such device or address (is the loop driver in the kernel?)";
    case ENODEV: return "No such device (is squashfs in the kernel?)";
    case EBUSY: return "Device or resource busy";
    case EINVAL: return "Invalid argument";
    case ENOMEM: return "Out of memory";
    case ENOTDIR: return "Not a directory";
    case ENOEXEC: return "Exec format error";
    case EIO: return "Input/output error";
    case ENOTTY: return "Inappropriate ioctl for device";
    default: break;
  }
  static char number[] = "errno 0000";
  char *p = number + sizeof number - 1;
  for (unsigned long v = (unsigned long)err; p > number + 6; v /= 10) *--p = (char)('0' + v % 10);
  return number;
}

// One line on the console: "stage0: <what><path>: <why>". PID 1 returning makes the
// kernel panic (and reboot when panic= says so), so this line comes first and names the cause.
static int fail(const char *what, const char *path, long result) {
  const char *parts[] = {"stage0: ", what, path, ": ", why(-result), "\n"};
  for (unsigned i = 0; i < sizeof parts / sizeof *parts; i++) {
    if (sys(SYS_write, 2, (long)parts[i], (long)length(parts[i]), 0, 0) < 0) break;
  }
  return 1;
}

static int stage0(char **argv, char **envp) {
  long image = sys(SYS_openat, AT_CWD, (long)IMAGE, O_RDONLY | O_CLOEXEC, 0, 0);
  if (image < 0) return fail("cannot open the system image ", IMAGE, image);
  long r = sys(SYS_mknodat, AT_CWD, (long)LOOP_NODE, S_IFBLK | 0600, LOOP_DEVICE, 0);
  if (r < 0 && r != -EEXIST) return fail("cannot make the loop device node ", LOOP_NODE, r);
  long loop = sys(SYS_openat, AT_CWD, (long)LOOP_NODE, O_RDWR | O_CLOEXEC, 0, 0);
  if (loop < 0) return fail("cannot open the loop device ", LOOP_NODE, loop);
  struct loop_config config = {0};
  config.fd = (unsigned)image;
  config.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
  for (unsigned i = 0; i < sizeof IMAGE && i < LO_NAME_SIZE - 1; i++) config.info.lo_file_name[i] = (__u8)IMAGE[i];
  r = sys(SYS_ioctl, loop, LOOP_CONFIGURE, (long)&config, 0, 0);
  if (r < 0) return fail("cannot attach the system image to ", LOOP_NODE, r);
  // No readahead: a page fault in the executable then decompresses only the squashfs block that holds the
  // page, not the blocks of the 128 KiB window around it. Node's start touches its 104 MB here and there;
  // measured (icount), a two-line program's first line 1.84 -> 1.70 s with 128 KiB blocks, 1.49 s with 32 KiB.
  r = sys(SYS_ioctl, loop, BLKRASET, 0, 0, 0);
  if (r < 0) return fail("cannot turn readahead off on ", LOOP_NODE, r);
  r = sys(SYS_mount, (long)LOOP_NODE, (long)MOUNT_DIR, (long)"squashfs", MS_RDONLY | MS_NODEV | MS_NOSUID, 0);
  if (r < 0) return fail("cannot mount the system image on ", MOUNT_DIR, r);
  // The mount holds the loop device (and, through it, the image): none of these is needed now.
  sys(SYS_close, loop, 0, 0, 0, 0);
  sys(SYS_close, image, 0, 0, 0, 0);
  sys(SYS_unlinkat, AT_CWD, (long)LOOP_NODE, 0, 0, 0);
  argv[0] = INIT;
  r = sys(SYS_execve, (long)INIT, (long)argv, (long)envp, 0, 0);
  return fail("cannot execute ", INIT, r);
}

// The kernel starts us with argc, argv[], NULL, envp[], NULL on the stack.
__attribute__((used)) static void start(long *stack) {
  char **argv = (char **)(stack + 1);
  sys(SYS_exit_group, stage0(argv, argv + stack[0] + 1), 0, 0, 0, 0);
}
__asm__(".text\n.global _start\n_start:\n  xor %ebp, %ebp\n  mov %rsp, %rdi\n  and $-16, %rsp\n  call start\n  hlt\n");
