// push-signature: what the signature of an extension pushed with `appliance push` signs (ExtensionService/Push):
// the extension's name and its image's hash, so a signature cannot be replayed for another extension or image.
// Shared by the command that signs and the machine that checks.
export const pushSigningText = (extension: string, sha256: string) =>
  `appliance-extension-push\n${extension}\n${sha256}\n`;
