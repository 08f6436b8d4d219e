// layers: the sources annotation a merged spec carries reads back as written, whatever its ids hold.
import t from 'tap';
import { formatSources, SOURCES_ANNOTATION, sourcesOf } from './layers.ts';

t.test('sources: written and read back, ids with , % : / intact', async (t) => {
  const sources = [
    { layer: 'config', id: 'mine' }, { layer: 'dhcp', id: 'dhcp/eth0' },
    { layer: 'config', id: 'a,b' }, { layer: 'platform', id: '100%,x:y' }, { layer: 'dhcp', id: 'fec0::1/64' },
  ];
  const text = formatSources(sources);
  t.equal(text.split(',').length, sources.length, 'one entry per source');
  t.match(text, /^config:mine,dhcp:dhcp\/eth0,/, 'plain ids are written as they are');
  t.same(sourcesOf({ [SOURCES_ANNOTATION]: text }), sources);
  t.same(sourcesOf({}), [], 'no annotation: no sources');
  t.same(sourcesOf({ [SOURCES_ANNOTATION]: 'nolayer,config:x' }), [{ layer: 'config', id: 'x' }],
    'an entry without a layer is skipped');
});
