// Another process that writes on request (IPC): the bench sends { name, enabled }, this
// process flips the tool with the store's setEnabled and answers once it has committed.
import { openSqliteToolRegistry } from '../../dist/index.js';

const registry = await openSqliteToolRegistry({ filename: process.argv[2], cache: false });
process.on('message', async (message) => {
  if (message === 'exit') {
    await registry.close();
    process.disconnect();
    return;
  }
  const registration = await registry.setEnabled(message.name, message.enabled);
  process.send({ enabled: registration.enabled });
});
process.send('ready');
