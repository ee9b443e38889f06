// A free TCP port on the loopback interface (the kernel picks it), for a WebDriver server.
// Shared by the end-to-end harness and the realistic-profile maker.
import net from "node:net";

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
