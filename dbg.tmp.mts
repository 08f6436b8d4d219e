import { bootWithApi } from './qemu/api-vm.ts';
const { vm, run, poll } = await bootWithApi({ append: ['appliance.test.plugins'] });
await run(['apply', '-f', '-'], 'metadata: {type: sysctl, id: net.ipv4.ip_forward}\nspec: {value: "1"}\n');
await new Promise(r => setTimeout(r, 4000));
console.log((await run(['get', 'plugins'])).out);
console.log(vm.console().split('\n').filter(l => /plugin\/(system|storage)|ERROR|WARN/.test(l)).slice(0, 30).join('\n'));
vm.kill();
process.exit(0);
