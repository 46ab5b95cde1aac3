"""Complex tensors, as PyTorch 2.13 has them: complex64 and complex128 (``cfloat``, ``cdouble``), made from complex
numbers or parts (``complex``, ``polar``, ``view_as_complex``), taken apart (``real``, ``imag``, ``view_as_real``,
``abs``, ``angle``), printed, promoted and refused as PyTorch's; their gradients PyTorch's convention, ``dL/dx + i
dL/dy`` of a real loss (held to finite differences of the engine's own forward, and to torch where it is installed),
second derivatives included. The table's answers were printed by torch 2.13.0 and are held to the torch installed
where there is one; the few places where the engine answers otherwise, on purpose, have a table of their own."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
from engine.autograd.gradcheck import GradcheckError
from tests.engine.helpers import answer, check_answer, table_tests

pytestmark = pytest.mark.usefixtures("graph_core")  # compiled and Python recording and walk (conftest.py)


def _env(lib):
    return {"engine": lib, "z": lib.tensor([[1 + 2j, -3 + 0.5j], [0.25 - 1j, 2 + 0j]]),
            "r": lib.tensor([[1.0, -2.0], [3.0, 0.5]])}


CASES = [
    ('engine.tensor([1, 2j])', ((2,), 'complex64', [(1+0j), 2j])),
    ('engine.tensor([1, 2j], dtype=engine.complex128)', ((2,), 'complex128', [(1+0j), 2j])),
    ('engine.tensor([[1.5, -2j], [3 + 4j, 0]])', ((2, 2), 'complex64', [(1.5+0j), -2j, (3+4j), 0j])),
    ('engine.tensor(1j)', ((), 'complex64', [1j])),
    ('engine.full((2,), 1j)', ((2,), 'complex64', [1j, 1j])),
    ('engine.zeros(2, dtype=engine.cfloat)', ((2,), 'complex64', [0j, 0j])),
    ('engine.ones(2, dtype=engine.cdouble)', ((2,), 'complex128', [(1+0j), (1+0j)])),
    ('engine.eye(2, dtype=engine.complex64)', ((2, 2), 'complex64', [(1+0j), 0j, 0j, (1+0j)])),
    ('engine.linspace(0, 1, 3, dtype=engine.cfloat)', ((3,), 'complex64', [0j, (0.5+0j), (1+0j)])),
    ('engine.arange(3, dtype=engine.cfloat)',
     ('NotImplementedError', '"arange_cpu" not implemented for \'ComplexFloat\'')),
    ('engine.ones(2) * 1j', ((2,), 'complex64', [1j, 1j])),
    ('engine.ones(2, dtype=engine.float64) * 1j', ((2,), 'complex128', [1j, 1j])),
    ('engine.ones(2, dtype=engine.int64) * 1j', ((2,), 'complex64', [1j, 1j])),
    ('engine.ones(2, dtype=engine.float64) * engine.tensor(1j)', ((2,), 'complex128', [1j, 1j])),
    ('z * engine.tensor(2.0, dtype=engine.float64)', ((2, 2), 'complex64', [(2+4j), (-6+1j), (0.5-2j), (4+0j)])),
    ('z + 1', ((2, 2), 'complex64', [(2+2j), (-2+0.5j), (1.25-1j), (3+0j)])),
    ('z * 2.5', ((2, 2), 'complex64', [(2.5+5j), (-7.5+1.25j), (0.625-2.5j), (5+0j)])),
    ('z / (1 + 1j)', ((2, 2), 'complex64', [(1.5+0.5j), (-1.25+1.75j), (-0.375-0.625j), (1-1j)])),
    ('z - r', ((2, 2), 'complex64', [2j, (-1+0.5j), (-2.75-1j), (1.5+0j)])),
    ('z * r', ((2, 2), 'complex64', [(1+2j), (6-1j), (0.75-3j), (1+0j)])),
    ('r / z',
     ((2, 2),
      'complex64',
      [(0.20000000298023224-0.4000000059604645j),
       (0.6486486792564392+0.10810811817646027j),
       (0.7058823704719543+2.8235294818878174j),
       (0.25+0j)])),
    ('z ** 2', ((2, 2), 'complex64', [(-3+4j), (8.75-3j), (-0.9375-0.5j), (4+0j)])),
    ('z ** 0.5',
     ((2, 2),
      'complex64',
      [(1.272019624710083+0.7861514091491699j),
       (0.14384238421916962+1.7380133867263794j),
       (0.8002426028251648-0.624810516834259j),
       (1.4142135381698608+0j)])),
    ('2 ** z',
     ((2, 2),
      'complex64',
      [(0.36691394448280334+1.9660555124282837j),
       (0.1175677627325058+0.0424596406519413j),
       (0.91478431224823-0.7598572373390198j),
       (4+0j)])),
    ('z.pow(z)',
     ((2, 2),
      'complex64',
      [(-0.22251714766025543+0.10070913285017014j),
       (-0.003981991671025753-0.006967711262404919j),
       (0.2502846419811249-0.09471303224563599j),
       (4+0j)])),
    ('z @ z', ((2, 2), 'complex64', [(-3.25+7.125j), (-10-4.5j), (2.75-2.5j), (3.75+3.125j)])),
    ('z @ r', ('RuntimeError', 'expected m1 and m2 to have the same dtype, but got: c10::complex<float> != float')),
    ('z.abs()', ((2, 2), 'float32', [2.2360680103302, 3.041381359100342, 1.0307763814926147, 2.0])),
    ('z.angle()', ((2, 2), 'float32', [1.1071487665176392, 2.9764440059661865, -1.3258177042007446, 0.0])),
    ('z.sgn()',
     ((2, 2),
      'complex64',
      [(0.4472135901451111+0.8944271802902222j),
       (-0.986393928527832+0.16439898312091827j),
       (0.24253563582897186-0.9701425433158875j),
       (1+0j)])),
    ('z.sign()',
     ('NotImplementedError',
      'Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.')),
    ('z.real', ((2, 2), 'float32', [1.0, -3.0, 0.25, 2.0])),
    ('z.imag', ((2, 2), 'float32', [2.0, 0.5, -1.0, 0.0])),
    ('r.real', ((2, 2), 'float32', [1.0, -2.0, 3.0, 0.5])),
    ('r.imag', ('RuntimeError', 'imag is not implemented for tensors with non-complex dtypes.')),
    ('z.conj()', ((2, 2), 'complex64', [(1-2j), (-3-0.5j), (0.25+1j), (2+0j)])),
    ('z.conj_physical()', ((2, 2), 'complex64', [(1-2j), (-3-0.5j), (0.25+1j), (2+0j)])),
    ('z.is_conj()', ((), 'bool', [False])),
    ('z.resolve_conj()', ((2, 2), 'complex64', [(1+2j), (-3+0.5j), (0.25-1j), (2+0j)])),
    ('z.mH', ((2, 2), 'complex64', [(1-2j), (0.25+1j), (-3-0.5j), (2+0j)])),
    ('z.H', ((2, 2), 'complex64', [(1-2j), (0.25+1j), (-3-0.5j), (2+0j)])),
    ('z.adjoint()', ((2, 2), 'complex64', [(1-2j), (0.25+1j), (-3-0.5j), (2+0j)])),
    ('z.t()', ((2, 2), 'complex64', [(1+2j), (0.25-1j), (-3+0.5j), (2+0j)])),
    ('z.exp()',
     ((2, 2),
      'complex64',
      [(-1.13120436668396+2.471726655960083j),
       (0.04369226098060608+0.023869192227721214j),
       (0.6937618851661682-1.080470085144043j),
       (7.389056205749512+0j)])),
    ('z.log()',
     ((2, 2),
      'complex64',
      [(0.8047189712524414+1.1071487665176392j),
       (1.112311840057373+2.9764440059661865j),
       (0.03031231090426445-1.3258177042007446j),
       (0.6931471824645996+0j)])),
    ('z.sqrt()',
     ((2, 2),
      'complex64',
      [(1.272019624710083+0.7861514091491699j),
       (0.14384238421916962+1.7380133867263794j),
       (0.8002426028251648-0.624810516834259j),
       (1.4142135381698608+0j)])),
    ('z.sin()',
     ((2, 2),
      'complex64',
      [(3.165778636932373+1.9596009254455566j),
       (-0.15913057327270508-0.5158804059028625j),
       (0.3817642629146576-1.1386669874191284j),
       (0.9092974066734314+0j)])),
    ('z.cos()',
     ((2, 2),
      'complex64',
      [(2.0327229499816895-3.0518977642059326j),
       (-1.116341233253479+0.07353696972131729j),
       (1.4951099157333374+0.2907494306564331j),
       (-0.416146844625473+0j)])),
    ('z.tan()',
     ((2, 2),
      'complex64',
      [(0.03381282463669777+1.0147936344146729j),
       (0.11162105202674866+0.46946996450424194j),
       (0.10332941263914108-0.7816882729530334j),
       (-2.185039758682251+0j)])),
    ('z.tanh()',
     ((2, 2),
      'complex64',
      [(1.1667362451553345-0.24345821142196655j),
       (-0.9973164796829224+0.004160427022725344j),
       (0.7324113249778748-1.2780381441116333j),
       (0.9640276432037354+0j)])),
    ('z.sigmoid()',
     ((2, 2),
      'complex64',
      [(1.0214154720306396+0.4034387469291687j),
       (0.04236404225230217+0.021901089698076248j),
       (0.5803620219230652-0.2676919102668762j),
       (0.8807970285415649+0j)])),
    ('z.sinh()',
     ((2, 2),
      'complex64',
      [(-0.489056259393692+1.4031192064285278j),
       (-8.791512489318848+4.826694488525391j),
       (0.13648700714111328-0.8679041266441345j),
       (3.6268603801727295+0j)])),
    ('z.cosh()',
     ((2, 2),
      'complex64',
      [(-0.6421481370925903+1.0686073303222656j),
       (8.835205078125-4.802824974060059j),
       (0.5572748184204102-0.21256592869758606j),
       (3.7621958255767822+0j)])),
    ('z.asin()',
     ((2, 2),
      'complex64',
      [(0.427078515291214+1.5285710096359253j),
       (-1.3961498737335205+1.7789905071258545j),
       (0.17630243301391602-0.8924633860588074j),
       (1.5707963705062866+1.316957950592041j)])),
    ('z.acos()',
     ((2, 2),
      'complex64',
      [(1.1437177658081055-1.5285710096359253j),
       (2.9669461250305176-1.7789905071258545j),
       (1.3944939374923706+0.8924633860588074j),
       (-0-1.316957950592041j)])),
    ('z.atan()',
     ((2, 2),
      'complex64',
      [(1.338972568511963+0.4023594856262207j),
       (-1.2563982009887695+0.0489361435174942j),
       (0.8475756645202637-1.043596863746643j),
       (1.1071487665176392+0j)])),
    ('z.asinh()',
     ((2, 2),
      'complex64',
      [(1.4693516492843628+1.063439965248108j),
       (-1.8301947116851807+0.15700459480285645j),
       (0.5097911357879639-1.0817519426345825j),
       (1.4436354637145996+0j)])),
    ('z.atanh()',
     ((2, 2),
      'complex64',
      [(0.1732867956161499+1.1780972480773926j),
       (-0.3352934718132019+1.5104844570159912j),
       (0.12367405742406845-0.8010180592536926j),
       (0.5493061542510986+1.5707963705062866j)])),
    ('z.reciprocal()',
     ((2, 2),
      'complex64',
      [(0.20000000298023224-0.4000000059604645j),
       (-0.3243243396282196-0.05405405908823013j),
       (0.23529411852359772+0.9411764740943909j),
       (0.5+0j)])),
    ('z.rsqrt()',
     ((2, 2),
      'complex64',
      [(0.5688644647598267-0.3515775799751282j),
       (0.047295086085796356-0.5714552998542786j),
       (0.7763493657112122+0.606155276298523j),
       (0.7071067690849304+0j)])),
    ('z.log1p()',
     ((2, 2),
      'complex64',
      [(1.0397207736968994+0.7853981852531433j),
       (0.7234594821929932+2.8966140747070312j),
       (0.4704916775226593-0.6747409701347351j),
       (1.0986123085021973+0j)])),
    ('z.expm1()',
     ((2, 2),
      'complex64',
      [(-2.13120436668396+2.471726655960083j),
       (-0.9563077688217163+0.023869192227721214j),
       (-0.3062381446361542-1.080470085144043j),
       (6.389056205749512+0j)])),
    ('z.log2()',
     ((2, 2),
      'complex64',
      [(1.160964012145996+1.5972779989242554j),
       (1.604726791381836+4.294100761413574j),
       (0.04373142123222351-1.9127506017684937j),
       (1+0j)])),
    ('z.log10()',
     ((2, 2),
      'complex64',
      [(0.34948500990867615+0.48082858324050903j),
       (0.48307088017463684+1.292653203010559j),
       (0.013164469040930271-0.5757952928543091j),
       (0.3010299801826477+0j)])),
    ('z.exp2()',
     ((2, 2),
      'complex64',
      [(0.36691394448280334+1.9660555124282837j),
       (0.1175677627325058+0.0424596406519413j),
       (0.91478431224823-0.7598572373390198j),
       (4+0j)])),
    ('z.square()', ((2, 2), 'complex64', [(-3+4j), (8.75-3j), (-0.9375-0.5j), (4+0j)])),
    ('z.neg()', ((2, 2), 'complex64', [(-1-2j), (3-0.5j), (-0.25+1j), (-2+0j)])),
    ('z.sum()', ((), 'complex64', [(0.25+1.5j)])),
    ('z.sum(0)', ((2,), 'complex64', [(1.25+1j), (-1+0.5j)])),
    ('z.mean()', ((), 'complex64', [(0.0625+0.375j)])),
    ('z.mean(1)', ((2,), 'complex64', [(-1+1.25j), (1.125-0.5j)])),
    ('z.mean(dtype=engine.float32)', ((), 'float32', [0.0625])),
    ('z.prod()', ((), 'complex64', [(-13+5.25j)])),
    ('z.cumsum(0)', ((2, 2), 'complex64', [(1+2j), (-3+0.5j), (1.25+1j), (-1+0.5j)])),
    ('z.cumprod(1)', ((2, 2), 'complex64', [(1+2j), (-4-5.5j), (0.25-1j), (0.5-2j)])),
    ('z.var()', ((), 'float32', [6.244791507720947])),
    ('z.var(1, unbiased=False)', ((2,), 'float32', [4.5625, 1.015625])),
    ('z.std()', ((), 'float32', [2.498958110809326])),
    ('z.std(0)', ((2,), 'float32', [2.1866068840026855, 3.5531675815582275])),
    ('z.norm()', ((), 'float32', [4.394598960876465])),
    ('z.norm(1)', ((), 'float32', [8.308225631713867])),
    ("engine.linalg.vector_norm(z, float('inf'))", ((), 'float32', [3.041381359100342])),
    ('engine.linalg.norm(z)', ((), 'float32', [4.394598960876465])),
    ('engine.linalg.matrix_norm(z)', ((), 'float32', [4.394598960876465])),
    ('engine.dist(z, z * 2)', ((), 'float32', [4.394598960876465])),
    ('engine.dot(z[0], z[1])', ((), 'complex64', [(-3.75+0.5j)])),
    ('engine.vdot(z[0], z[1])', ((), 'complex64', [(-7.75-2.5j)])),
    ('engine.outer(z[0], z[1])', ((2, 2), 'complex64', [(2.25-0.5j), (2+4j), (-0.25+3.125j), (-6+1j)])),
    ('engine.inner(z, z)', ((2, 2), 'complex64', [(5.75+1j), (-3.75+0.5j), (-3.75+0.5j), (3.0625-0.5j)])),
    ('engine.kron(z, z)',
     ((4, 4),
      'complex64',
      [(-3+4j),
       (-4-5.5j),
       (-4-5.5j),
       (8.75-3j),
       (2.25-0.5j),
       (2+4j),
       (-0.25+3.125j),
       (-6+1j),
       (2.25-0.5j),
       (-0.25+3.125j),
       (2+4j),
       (-6+1j),
       (-0.9375-0.5j),
       (0.5-2j),
       (0.5-2j),
       (4+0j)])),
    ('engine.trace(z)', ((), 'complex64', [(3+2j)])),
    ('engine.diag(z)', ((2,), 'complex64', [(1+2j), (2+0j)])),
    ('engine.tril(z)', ((2, 2), 'complex64', [(1+2j), 0j, (0.25-1j), (2+0j)])),
    ("engine.einsum('ij,jk->ik', z, z)",
     ((2, 2), 'complex64', [(-3.25+7.125j), (-10-4.5j), (2.75-2.5j), (3.75+3.125j)])),
    ('engine.view_as_real(z)', ((2, 2, 2), 'float32', [1.0, 2.0, -3.0, 0.5, 0.25, -1.0, 2.0, 0.0])),
    ('engine.view_as_complex(engine.tensor([[1.0, 2.0], [3.0, -4.0]]))', ((2,), 'complex64', [(1+2j), (3-4j)])),
    ('engine.view_as_real(r)', ('RuntimeError', 'view_as_real is only supported for complex tensors')),
    ('engine.view_as_complex(engine.tensor([1.0, 2.0, 3.0]))',
     ('RuntimeError', 'Tensor must have a last dimension of size 2')),
    ('engine.view_as_complex(engine.tensor([[1, 2]]))',
     ('RuntimeError',
      'view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: '
      'Long')),
    ('engine.complex(r, r)', ((2, 2), 'complex64', [(1+1j), (-2-2j), (3+3j), (0.5+0.5j)])),
    ('engine.complex(r, r.double())',
     ('RuntimeError', 'Expected object of scalar type Float but got scalar type Double for second argument')),
    ('engine.complex(r.long(), r.long())',
     ('RuntimeError', 'Expected both inputs to be Half, Float or Double tensors but got Long and Long')),
    ('engine.polar(r.abs(), r)',
     ((2, 2),
      'complex64',
      [(0.5403022766113281+0.8414709568023682j),
       (-0.832293689250946-1.8185948133468628j),
       (-2.969977378845215+0.4233599901199341j),
       (0.43879127502441406+0.23971277475357056j)])),
    ('engine.cat([z, r])',
     ((4, 2), 'complex64', [(1+2j), (-3+0.5j), (0.25-1j), (2+0j), (1+0j), (-2+0j), (3+0j), (0.5+0j)])),
    ('engine.stack([z, z])',
     ((2, 2, 2), 'complex64', [(1+2j), (-3+0.5j), (0.25-1j), (2+0j), (1+2j), (-3+0.5j), (0.25-1j), (2+0j)])),
    ('engine.where(z == z, z, 0)', ((2, 2), 'complex64', [(1+2j), (-3+0.5j), (0.25-1j), (2+0j)])),
    ('z.masked_fill(r > 0, 1j)', ((2, 2), 'complex64', [1j, (-3+0.5j), 1j, 1j])),
    ('z.lerp(z * 2, 0.5)', ((2, 2), 'complex64', [(1.5+3j), (-4.5+0.75j), (0.375-1.5j), (3+0j)])),
    ('z.addcmul(z, z, value=1j)', ((2, 2), 'complex64', [(-3-1j), 9.25j, (0.75-1.9375j), (2+4j)])),
    ('z.addcdiv(z, z)', ((2, 2), 'complex64', [(2+2j), (-2+0.5j), (1.25-1j), (3+0j)])),
    ('z.sub(z, alpha=2j)', ((2, 2), 'complex64', [(5+0j), (-2+6.5j), (-1.75-1.5j), (2-4j)])),
    ('z.float_power(2)', ((2, 2), 'complex128', [(-3+4j), (8.75-3j), (-0.9375-0.5j), (4+0j)])),
    ('z.to(engine.float32)', ((2, 2), 'float32', [1.0, -3.0, 0.25, 2.0])),
    ('z.int()', ((2, 2), 'int32', [1, -3, 0, 2])),
    ('r.to(engine.complex64)', ((2, 2), 'complex64', [(1+0j), (-2+0j), (3+0j), (0.5+0j)])),
    ('z.to(engine.complex128)', ((2, 2), 'complex128', [(1+2j), (-3+0.5j), (0.25-1j), (2+0j)])),
    ('z.isnan()', ((2, 2), 'bool', [False, False, False, False])),
    ('z.isfinite()', ((2, 2), 'bool', [True, True, True, True])),
    ('z.isinf()', ((2, 2), 'bool', [False, False, False, False])),
    ('engine.isclose(z, z + 1e-9)', ((2, 2), 'bool', [True, True, True, True])),
    ('engine.allclose(z, z)', ((), 'bool', [True])),
    ('z == 1j', ((2, 2), 'bool', [False, False, False, False])),
    ('z != z', ((2, 2), 'bool', [False, False, False, False])),
    ('z.eq(z.conj())', ((2, 2), 'bool', [False, False, False, True])),
    ('z.count_nonzero()', ((), 'int64', [4])),
    ('z.any()', ((), 'bool', [True])),
    ('z.flip(0)', ((2, 2), 'complex64', [(0.25-1j), (2+0j), (1+2j), (-3+0.5j)])),
    ('z.roll(1)', ((2, 2), 'complex64', [(2+0j), (1+2j), (-3+0.5j), (0.25-1j)])),
    ('z.repeat(2, 1)',
     ((4, 2), 'complex64', [(1+2j), (-3+0.5j), (0.25-1j), (2+0j), (1+2j), (-3+0.5j), (0.25-1j), (2+0j)])),
    ('engine.nn.functional.pad(z, (1, 1))',
     ((2, 4), 'complex64', [0j, (1+2j), (-3+0.5j), 0j, 0j, (0.25-1j), (2+0j), 0j])),
    ('engine.nn.functional.l1_loss(z, z * 2)', ((), 'float32', [2.077056407928467])),
    ('engine.nn.functional.normalize(z)',
     ((2, 2),
      'complex64',
      [(0.26490646600723267+0.5298129320144653j),
       (-0.794719398021698+0.13245323300361633j),
       (0.1111111119389534-0.4444444477558136j),
       (0.8888888955116272+0j)])),
    ('engine.nn.functional.linear(z, z)',
     ((2, 2), 'complex64', [(5.75+1j), (-3.75+0.5j), (-3.75+0.5j), (3.0625-0.5j)])),
    ('engine.nn.functional.linear(z, z, z[0])',
     ((2, 2), 'complex64', [(6.75+3j), (-6.75+1j), (-2.75+2.5j), (0.0625+0j)])),
    ('engine.nn.functional.silu(z)',
     ((2, 2),
      'complex64',
      [(0.21453796327114105+2.4462695121765137j),
       (-0.13804267346858978-0.04452124983072281j),
       (-0.12260141223669052-0.647284984588623j),
       (1.7615940570831299+0j)])),
    ('engine.linalg.inv(z)',
     ((2, 2),
      'complex64',
      [(0.7721179723739624-0.30026814341545105j),
       (1.0831098556518555-0.6434317827224731j),
       (0.053619302809238434+0.4235925078392029j),
       (0.6863270998001099+0.6219838857650757j)])),
    ('engine.linalg.det(z)', ((), 'complex64', [(2.25+0.8750001192092896j)])),
    ('engine.linalg.slogdet(z)[1]', ((), 'float32', [0.8813477754592896])),
    ('engine.linalg.solve(z, z[0])',
     ((2,), 'complex64', [(-1.5549596548080444+3.71581768989563j), (-3.163538932800293-0.9919569492340088j)])),
    ('engine.linalg.solve(z, z)',
     ((2, 2),
      'complex64',
      [(1+2.3841858265427618e-08j), 0j, (-2.045414149165481e-08-1.853656428352224e-08j), (1+0j)])),
    ('z.is_complex()', ((), 'bool', [True])),
    ('z.is_floating_point()', ((), 'bool', [False])),
    ('engine.is_complex(r)', ((), 'bool', [False])),
    ('z.dtype.is_complex', ((), 'bool', [True])),
    ('z.dtype.is_floating_point', ((), 'bool', [False])),
    ('z.element_size() == 8', ((), 'bool', [True])),
    ("z.type() == 'torch.ComplexFloatTensor'", ((), 'bool', [True])),
    ('engine.result_type(z, 1.0) == engine.complex64', ((), 'bool', [True])),
    ('engine.promote_types(engine.float64, engine.complex64) == engine.complex128', ((), 'bool', [True])),
    ('engine.promote_types(engine.float16, engine.complex64) == engine.complex64', ((), 'bool', [True])),
    ('engine.promote_types(engine.int64, engine.complex128) == engine.complex128', ((), 'bool', [True])),
    ('engine.can_cast(engine.complex64, engine.float32)', ((), 'bool', [False])),
    ('engine.can_cast(engine.float64, engine.complex64)', ((), 'bool', [True])),
    ('z.relu()', ('NotImplementedError', 'clamp is not supported for complex types')),
    ('engine.relu(z)', ('NotImplementedError', 'clamp is not supported for complex types')),
    ('z.clamp(0, 1)', ('NotImplementedError', 'clamp is not supported for complex types')),
    ('z.clamp(min=0)', ('NotImplementedError', 'clamp is not supported for complex types')),
    ('z > 0', ('NotImplementedError', '"gt_cpu" not implemented for \'ComplexFloat\'')),
    ('z < z', ('NotImplementedError', '"lt_cpu" not implemented for \'ComplexFloat\'')),
    ('z <= 1', ('NotImplementedError', '"le_cpu" not implemented for \'ComplexFloat\'')),
    ('z >= z', ('NotImplementedError', '"ge_cpu" not implemented for \'ComplexFloat\'')),
    ('z.max()', ('NotImplementedError', '"max_all" not implemented for \'ComplexFloat\'')),
    ('z.min()', ('NotImplementedError', '"min_all" not implemented for \'ComplexFloat\'')),
    ('z.max(0)', ('RuntimeError', 'max(): does not support complex input')),
    ('z.amax()', ('NotImplementedError', '"max_values_cpu" not implemented for \'ComplexFloat\'')),
    ('z.amin()', ('NotImplementedError', '"min_values_cpu" not implemented for \'ComplexFloat\'')),
    ('z.aminmax()', ('NotImplementedError', '"aminmax_cpu" not implemented for \'ComplexFloat\'')),
    ('z.argmax()', ('RuntimeError', 'argmax(): does not support complex input')),
    ('z.argmin()', ('RuntimeError', 'argmin(): does not support complex input')),
    ('z.sort()', ('RuntimeError', ' Sort does not support complex dtypes on CPU')),
    ('z.argsort()', ('RuntimeError', ' Sort does not support complex dtypes on CPU')),
    ('z.msort()', ('RuntimeError', ' Sort does not support complex dtypes on CPU')),
    ('z.topk(1)', ('RuntimeError', ' topk does not support complex dtypes on CPU')),
    ('z.kthvalue(1)', ('NotImplementedError', '"kthvalue_cpu" not implemented for \'ComplexFloat\'')),
    ('z.median()', ('NotImplementedError', '"median_cpu" not implemented for \'ComplexFloat\'')),
    ('z.nanmedian()', ('NotImplementedError', '"median_cpu" not implemented for \'ComplexFloat\'')),
    ('z.mode()', ('NotImplementedError', '"mode_cpu" not implemented for \'ComplexFloat\'')),
    ('z.cummax(0)', ('NotImplementedError', '"cummax_cpu" not implemented for \'ComplexFloat\'')),
    ('z.cummin(0)', ('NotImplementedError', '"cummin_cpu" not implemented for \'ComplexFloat\'')),
    ('z.maximum(z)', ('RuntimeError', 'maximum not implemented for complex tensors.')),
    ('z.minimum(z)', ('RuntimeError', 'minimum not implemented for complex tensors.')),
    ('engine.fmax(z, z)', ('RuntimeError', 'fmax not implemented for complex tensors.')),
    ('z.floor()', ('NotImplementedError', 'floor is not supported for complex inputs')),
    ('z.ceil()', ('NotImplementedError', 'ceil is not supported for complex inputs')),
    ('z.trunc()', ('NotImplementedError', 'trunc is not supported for complex inputs')),
    ('z.round()', ('NotImplementedError', '"round_vml_cpu" not implemented for \'ComplexFloat\'')),
    ('z.frac()', ('NotImplementedError', '"frac_cpu" not implemented for \'ComplexFloat\'')),
    ('z % 2', ('NotImplementedError', '"remainder_cpu" not implemented for \'ComplexFloat\'')),
    ('z // 2', ('NotImplementedError', '"div_floor_cpu" not implemented for \'ComplexFloat\'')),
    ('z.fmod(2)', ('NotImplementedError', '"fmod_cpu" not implemented for \'ComplexFloat\'')),
    ('z.remainder(2)', ('NotImplementedError', '"remainder_cpu" not implemented for \'ComplexFloat\'')),
    ('z.atan2(z)', ('NotImplementedError', '"atan2_cpu" not implemented for \'ComplexFloat\'')),
    ('z.hypot(z)', ('NotImplementedError', '"hypot_cpu" not implemented for \'ComplexFloat\'')),
    ('z.copysign(z)', ('NotImplementedError', '"copysign_cpu" not implemented for \'ComplexFloat\'')),
    ('z.xlogy(z)', ('NotImplementedError', '"xlogy_cpu" not implemented for \'ComplexFloat\'')),
    ('z.erf()', ('NotImplementedError', '"erf_vml_cpu" not implemented for \'ComplexFloat\'')),
    ('z.lgamma()', ('NotImplementedError', '"lgamma_vml_cpu" not implemented for \'ComplexFloat\'')),
    ('z.logit()', ('NotImplementedError', '"logit_cpu" not implemented for \'ComplexFloat\'')),
    ('z.signbit()', ('NotImplementedError', 'signbit is not implemented for complex tensors.')),
    ('z.isposinf()', ('RuntimeError', 'isposinf does not support complex inputs.')),
    ('z.isneginf()', ('RuntimeError', 'isneginf does not support complex inputs.')),
    ('engine.heaviside(z, z)', ('RuntimeError', 'heaviside is not yet implemented for complex tensors.')),
    ('z.unique()', ('NotImplementedError', '"unique" not implemented for \'ComplexFloat\'')),
    ('z.nansum()', ('RuntimeError', 'nansum on CPU does not support complex inputs')),
    ('z.nanmean()', ('RuntimeError', 'nansum on CPU does not support complex inputs')),
    ('z.softmax(0)', ('NotImplementedError', '"softmax_kernel_impl" not implemented for \'ComplexFloat\'')),
    ('z.log_softmax(1)',
     ('NotImplementedError', '"log_softmax_lastdim_kernel_impl" not implemented for \'ComplexFloat\'')),
    ('z.quantile(0.5)', ('RuntimeError', 'quantile() input tensor must be either float or double dtype')),
    ('engine.cdist(z, z)', ('RuntimeError', 'cdist only supports floating-point dtypes, X1 got: ComplexFloat')),
    ('engine.nn.functional.dropout(z)',
     ('NotImplementedError', '"bernoulli_scalar_cpu_" not implemented for \'ComplexFloat\'')),
    ('engine.nn.functional.gelu(z)',
     ('NotImplementedError', '"GeluKernelImpl" not implemented for \'ComplexFloat\'')),
    ('engine.nn.functional.softplus(z)',
     ('NotImplementedError', '"softplus_cpu" not implemented for \'ComplexFloat\'')),
    ('engine.nn.functional.leaky_relu(z)',
     ('NotImplementedError', '"leaky_relu_cpu" not implemented for \'ComplexFloat\'')),
    ('engine.nn.functional.elu(z)', ('NotImplementedError', '"elu_cpu" not implemented for \'ComplexFloat\'')),
    ('engine.nn.functional.hardtanh(z)', ('NotImplementedError', 'clamp is not supported for complex types')),
    ('engine.nn.functional.relu6(z)', ('NotImplementedError', 'clamp is not supported for complex types')),
    ('engine.nn.functional.mse_loss(z, z)',
     ('NotImplementedError', '"mse_cpu" not implemented for \'ComplexFloat\'')),
    ('engine.nn.functional.smooth_l1_loss(z, z)',
     ('NotImplementedError', '"smooth_l1_cpu" not implemented for \'ComplexFloat\'')),
    ('engine.nn.functional.huber_loss(z, z)',
     ('NotImplementedError', '"huber_cpu" not implemented for \'ComplexFloat\'')),
    ('engine.nn.functional.layer_norm(z, (2,))',
     ('NotImplementedError', '"LayerNormKernelImpl" not implemented for \'ComplexFloat\'')),
    ('engine.nn.functional.cross_entropy(z, engine.tensor([0, 1]))',
     ('NotImplementedError', '"log_softmax_lastdim_kernel_impl" not implemented for \'ComplexFloat\'')),
    ('engine.nn.Linear(2, 2)(z)',
     ('RuntimeError', 'mat1 and mat2 must have the same dtype, but got ComplexFloat and Float')),
    ('r.add_(1j)', ('RuntimeError', "result type ComplexFloat can't be cast to the desired output type Float")),
    ('engine.finfo(engine.cfloat).eps == engine.finfo(engine.float32).eps', ((), 'bool', [True])),
    ('engine.finfo(engine.cdouble).eps == engine.finfo(engine.float64).eps', ((), 'bool', [True])),
    ('engine.iinfo(engine.cfloat)',
     ('TypeError', "torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")),
    ('engine.randn(2, dtype=engine.cfloat).dtype == engine.complex64', ((), 'bool', [True])),
    ('engine.rand(2, 3, dtype=engine.cdouble).shape == (2, 3)', ((), 'bool', [True])),
    ('engine.zeros_like(z)', ((2, 2), 'complex64', [0j, 0j, 0j, 0j])),
    ('z.new_zeros(2)', ((2,), 'complex64', [0j, 0j])),
    ('z.new_tensor([1.0])', ((1,), 'complex64', [(1+0j)])),
    ('r.cfloat()', ((2, 2), 'complex64', [(1+0j), (-2+0j), (3+0j), (0.5+0j)])),
    ('r.cdouble().dtype == engine.complex128', ((), 'bool', [True])),
]

test_the_engine_answers_as_pytorch, test_the_table_is_pytorchs = table_tests(CASES, _env)

# Where the engine answers otherwise, on purpose: NumPy and CuPy have no complex of two float16s; the engine's conj()
# is a copy (PyTorch's a lazy view with a conjugate bit, which reads the same)
DIFFERENCES = [
    ("engine.ones(2, dtype=engine.complex32)",
     ("TypeError", "complex32 is PyTorch's, but the engine has no complex32 (NumPy and CuPy have none): use "
                   "complex64")),
    ("engine.tensor([1j], dtype=engine.chalf)", ("TypeError", "complex32 is PyTorch's, but the engine has no")),
    ("engine.ones(2, dtype=engine.float16) * 1j", ("TypeError", "complex32 is PyTorch's, but the engine has no")),
    ("z.conj().is_conj()", ((), "bool", [False])),
    ("r.chalf()", ("TypeError", "complex32 is PyTorch's, but the engine has no")),
]


@pytest.mark.parametrize(("expr", "expected"), DIFFERENCES, ids=[d[0] for d in DIFFERENCES])
def test_where_the_engine_answers_otherwise_on_purpose(expr, expected):
    check_answer(answer(expr, _env(engine)), expected, expr)


# ------------------------------------------------------------------ gradients

_RNG = np.random.default_rng(0)
_LEAVES = {"z": _RNG.normal(size=(3, 3)) + 1j * _RNG.normal(size=(3, 3)),
           "w": _RNG.normal(size=(3, 3)) + 1j * _RNG.normal(size=(3, 3)),
           "r": _RNG.normal(size=(3, 3)),
           "p": np.abs(_RNG.normal(size=(3, 3))) + 0.5}

# each a function of complex z, w and real r, p (3x3, float64 and complex128); its gradients, of a real loss of it,
# are checked against finite differences and against torch
GRADIENTS = [
    "z * w", "z / w", "z + r", "z * r", "r / z", "z - 2j * w", "z @ w", "z @ w.mH", "z.mT @ z", "z.exp()", "z.log()",
    "z.sqrt()", "z.sin()", "z.cos()", "z.tanh()", "z.sigmoid()", "z ** 2", "z ** 3.5", "z.pow(w)", "2 ** z",
    "z.reciprocal()", "z.rsqrt()", "z.log1p()", "z.expm1()", "z.tan()", "z.sinh()", "z.cosh()", "z.asin()",
    "z.acos()", "z.atan()", "z.asinh()", "z.atanh()", "z.log2()", "z.log10()", "z.exp2()", "z.sinc()", "z.abs()",
    "z.angle()", "z.sgn()", "z.real", "z.imag", "z.conj()", "z.conj_physical()", "engine.view_as_real(z)",
    "engine.view_as_complex(engine.stack([r, p], -1))", "engine.complex(r, p)", "engine.polar(p, r)", "z.sum()",
    "z.sum(0)", "z.mean(1)", "z.prod()", "z.prod(0)", "z.cumsum(1)", "z.cumprod(0)", "z.var()", "z.std(0)",
    "z.norm()", "z.norm(1)", "engine.linalg.vector_norm(z, 3, dim=1)", "engine.linalg.norm(z)", "z.dist(w)",
    "engine.dot(z[0], w[1])", "engine.vdot(z[0], w[1])", "engine.outer(z[0], w[1])",
    "engine.einsum('ij,jk->ik', z, w)", "engine.linalg.inv(z)", "engine.linalg.det(z)",
    "engine.linalg.slogdet(z)[1]", "engine.linalg.solve(z, w)", "engine.linalg.solve(z, w[0])",
    "engine.where(r > 0, z, w)", "z.masked_fill(r > 0, 0)", "z[0]", "z[:, 1:] * 2", "z.t()", "z.reshape(9)",
    "z.flip(0)", "z.roll(1, 0)", "engine.cat([z, w])", "engine.stack([z, w], 1)", "z.lerp(w, 0.3)",
    "z.lerp(w, 0.3j)", "z.addcmul(w, z, value=0.5)", "z.addcdiv(w, z, value=2)", "engine.nn.functional.pad(z, (1, 1))",
    "z.to(engine.complex64).to(engine.complex128)", "r.to(engine.complex128) * z", "z.diagonal()", "z.trace()",
    "engine.kron(z, w)", "engine.tril(z)", "z.repeat(2, 1)", "z.expand(2, 3, 3)", "engine.linalg.matrix_norm(z)",
    "engine.nn.functional.normalize(z)", "engine.nn.functional.l1_loss(z, w)", "engine.nn.functional.linear(z, w)",
    "engine.nn.functional.linear(z, w, w[0])", "(z * w).sum().abs()", "z.square()", "engine.trapezoid(z)",
    "engine.diff(z)", "z.sub(w, alpha=2j)", "z.add(w, alpha=0.5)", "engine.cross(z, w, dim=1)",
]


def _leaves(lib, arrays):
    return {k: lib.tensor(a, requires_grad=True) for k, a in arrays.items()}


def _weights(shape, complex_):
    c = np.random.default_rng(1).normal(size=shape)
    return c + 1j * np.random.default_rng(2).normal(size=shape) if complex_ else c


def _real_loss(out, lib):
    """A real number from ``out``: its inner product with fixed weights (the real part, for complex ``out``)."""
    c = lib.tensor(_weights(tuple(out.shape), out.is_complex()))
    return (out * c).real.sum() if out.is_complex() else (out * c).sum()


def _gradients(lib, expr, arrays):
    env = {"engine": lib, **_leaves(lib, arrays)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (torch's warning of a complex tensor's real cast)
        _real_loss(eval(expr.replace("engine.", "lib."), {"lib": lib, **env}), lib).backward()  # noqa: S307
    return {k: (None if env[k].grad is None else np.asarray(env[k].grad.detach().cpu().resolve_conj().numpy()))
            for k in arrays}


def _loss_value(expr, arrays) -> float:
    with engine.no_grad():
        env = {"engine": engine, **{k: engine.tensor(a) for k, a in arrays.items()}}
        return float(_real_loss(eval(expr, env), engine).item())  # noqa: S307


def _finite_differences(expr, arrays, name, eps=1e-6):
    """dL/dx + i dL/dy of each element of leaf ``name``, by central differences of the engine's forward."""
    base = arrays[name]
    grad = np.zeros(base.shape, dtype=base.dtype)
    for k in range(base.size):
        for step in ((1.0, 1j) if base.dtype.kind == "c" else (1.0,)):
            moved = []
            for sign in (1, -1):
                a = base.copy()
                a.reshape(-1)[k] += sign * eps * step
                moved.append(_loss_value(expr, {**arrays, name: a}))
            grad.reshape(-1)[k] += step * (moved[0] - moved[1]) / (2 * eps)
    return grad


# (rounded to complex64 on the way: a step of 1e-6 is below its precision)
_NOT_BY_DIFFERENCES = {"z.to(engine.complex64).to(engine.complex128)"}


@pytest.mark.parametrize("expr", [e for e in GRADIENTS if e not in _NOT_BY_DIFFERENCES])
def test_complex_gradients_are_finite_differences_of_the_forward(expr):
    got = _gradients(engine, expr, _LEAVES)
    assert any(g is not None for g in got.values())
    for name, g in got.items():
        if g is None:
            continue
        assert g.dtype == _LEAVES[name].dtype, name  # (a real leaf's is real: the real part of what reached it)
        np.testing.assert_allclose(g, _finite_differences(expr, _LEAVES, name), rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.torch
@pytest.mark.parametrize("expr", GRADIENTS)
def test_complex_gradients_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    got, theirs = _gradients(engine, expr, _LEAVES), _gradients(torch, expr, _LEAVES)
    for name in _LEAVES:
        assert (got[name] is None) == (theirs[name] is None), name
        if got[name] is not None:
            assert got[name].dtype == theirs[name].dtype, name
            np.testing.assert_allclose(got[name], theirs[name], rtol=1e-9, atol=1e-10, err_msg=name)


@pytest.mark.torch
@pytest.mark.parametrize("expr", ["z * w", "z @ w", "z.exp() / w", "z.abs()", "z.angle()", "z.sgn()",
                                  "engine.linalg.inv(z)", "engine.polar(p, r)", "z.var()", "z.norm()"])
def test_complex64_gradients_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    single = {k: a.astype(np.complex64 if a.dtype.kind == "c" else np.float32) for k, a in _LEAVES.items()}
    got, theirs = _gradients(engine, expr, single), _gradients(torch, expr, single)
    for name in single:
        assert (got[name] is None) == (theirs[name] is None), name
        if got[name] is not None:
            assert got[name].dtype == single[name].dtype == theirs[name].dtype, name
            np.testing.assert_allclose(got[name], theirs[name], rtol=2e-4, atol=2e-5, err_msg=name)


def test_a_complex_loss_needs_a_gradient_given_as_pytorch_asks():
    z = engine.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
        (z * z).sum().backward()
    (z * z).sum().backward(engine.tensor(1 + 0j))  # (the gradient of Re(sum z^2): 2 conj(z))
    np.testing.assert_allclose(z.grad.numpy(), 2 * np.conj([1 + 1j, 2 - 1j]))


def test_gradient_descent_on_a_complex_parameter_finds_the_least_squares_solution():
    """z -= lr * z.grad descends: the gradient is the direction of steepest ascent in the complex plane."""
    rng = np.random.default_rng(3)
    a = engine.tensor(rng.normal(size=(8, 3)) + 1j * rng.normal(size=(8, 3)))
    b = engine.tensor(rng.normal(size=8) + 1j * rng.normal(size=8))
    z = engine.zeros(3, dtype=engine.complex128, requires_grad=True)
    for _ in range(500):
        loss = (a @ z - b).abs().pow(2).sum()
        loss.backward()
        with engine.no_grad():
            z -= 0.02 * z.grad
            z.grad.zero_()
    exact = np.linalg.lstsq(a.numpy(), b.numpy(), rcond=None)[0]
    np.testing.assert_allclose(z.detach().numpy(), exact, atol=1e-8)


# ------------------------------------------------------------------ second derivatives (create_graph=True)

SECOND = [
    "(z * w).abs().sum()", "(z @ w).abs().pow(2).sum()", "(z.exp() * w).real.sum()",
    "(z * r).imag.sum() + z.abs().sum()", "(z / w).angle().sum()", "engine.view_as_real(z * z).pow(2).sum()",
    "(z.sin() * z.conj()).real.sum()", "z.sgn().real.sum()", "(z.pow(3) + z.sqrt()).abs().sum()",
    "engine.complex(r, r * 2).abs().sum()", "(z.reciprocal() * w.log()).imag.sum()", "z.var() + z.std()",
    "z.norm()", "engine.polar(p, r * 2).abs().sum() + engine.polar(p, r).real.sum()",
    "(engine.polar(p.detach(), r) * z).real.sum()", "engine.linalg.det(z).abs()",
    "engine.linalg.inv(z).abs().sum()", "engine.linalg.solve(z, w).real.sum()", "engine.linalg.slogdet(z)[1]",
    "(z.tanh() / w.cosh()).abs().sum()", "((z - w) ** 2.5).abs().sum()",
    "engine.nn.functional.linear(z, w, w[0]).abs().sum()",
    "(z.to(engine.complex64).to(engine.complex128) * r.to(engine.complex128)).abs().sum()",
    "z.prod().abs() + z.cumprod(0).real.sum()",
]


def _penalty_gradients(lib, expr, arrays):
    """The gradients of ``sum |dL/dleaf|^2`` (a gradient penalty: L's gradients recorded, then differentiated)."""
    env = _leaves(lib, arrays)
    loss = eval(expr.replace("engine.", "lib."), {"lib": lib, **env})  # noqa: S307
    leaves = list(env.values())
    grads = lib.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    penalty = sum((g.abs() ** 2).sum() for g in grads if g is not None)
    penalty.backward()
    return {k: (None if t.grad is None else t.grad.detach().resolve_conj().numpy()) for k, t in env.items()}


@pytest.mark.torch
@pytest.mark.parametrize("expr", SECOND)
def test_second_derivatives_of_complex_graphs_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    got, theirs = _penalty_gradients(engine, expr, _LEAVES), _penalty_gradients(torch, expr, _LEAVES)
    for name in _LEAVES:
        assert (got[name] is None) == (theirs[name] is None), name
        if got[name] is not None:
            np.testing.assert_allclose(got[name], theirs[name], rtol=1e-8, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("expr", ["(z * w).abs().sum()", "(z.exp() * w).real.sum()", "(z / w).angle().sum()",
                                  "z.sgn().real.sum()", "engine.polar(p, r).real.sum()", "z.var() + z.std()"])
def test_second_derivatives_are_finite_differences_of_the_first(expr):
    """The penalty's gradient against central differences of the penalty, each computed with first-order gradients
    only (no torch needed to say the recorded backward is right)."""
    got = _penalty_gradients(engine, expr, _LEAVES)

    def penalty(arrays):
        env = _leaves(engine, arrays)
        grads = engine.autograd.grad(eval(expr, {"engine": engine, **env}), list(env.values()),  # noqa: S307
                                     allow_unused=True)
        return sum(float((np.abs(g.numpy()) ** 2).sum()) for g in grads if g is not None)

    for name, g in got.items():
        if g is None:
            continue
        base, eps = _LEAVES[name], 1e-6
        numeric = np.zeros(base.shape, dtype=base.dtype)
        for k in range(base.size):
            for step in ((1.0, 1j) if base.dtype.kind == "c" else (1.0,)):
                values = []
                for sign in (1, -1):
                    a = base.copy()
                    a.reshape(-1)[k] += sign * eps * step
                    values.append(penalty({**_LEAVES, name: a}))
                numeric.reshape(-1)[k] += step * (values[0] - values[1]) / (2 * eps)
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-5, err_msg=name)


# ------------------------------------------------------------------ printing, as PyTorch prints

@pytest.mark.parametrize(("make", "text"), [
    (lambda: engine.tensor([[1 + 2j, -3 + 0.5j], [0.25 - 1j, 2 + 0j]]),
     "tensor([[ 1.0000+2.0000j, -3.0000+0.5000j],\n        [ 0.2500-1.0000j,  2.0000+0.0000j]])"),
    (lambda: engine.tensor([1 + 0j, 2j]), "tensor([1.+0.j, 0.+2.j])"),
    (lambda: engine.tensor([1e10 + 1j, 1j]), "tensor([1.0000e+10+1.j, 0.0000e+00+1.j])"),
    (lambda: engine.tensor([1 + 1j], dtype=engine.complex128), "tensor([1.+1.j], dtype=engine.complex128)"),
    (lambda: engine.tensor(1 + 1j), "tensor(1.+1.j)"),
    (lambda: engine.tensor([1 + 1j], requires_grad=True), "tensor([1.+1.j], requires_grad=True)"),
    (lambda: engine.zeros(0, dtype=engine.cfloat), "tensor([], dtype=engine.complex64)"),
    (lambda: engine.tensor([complex(float("nan"), -0.0), complex(float("inf"), 1.5)]),
     "tensor([nan-0.0000j, inf+1.5000j])"),
])
def test_complex_tensors_print_as_pytorchs(make, text):
    assert repr(make()) == text


def test_a_large_complex_tensor_prints_its_summary_as_pytorch():
    text = repr(engine.arange(2000.0).reshape(2, 1000) * (1 + 1j))
    assert text == ("tensor([[0.0000e+00+0.0000e+00j, 1.0000e+00+1.0000e+00j, 2.0000e+00+2.0000e+00j,\n"
                    "          ..., 9.9700e+02+9.9700e+02j, 9.9800e+02+9.9800e+02j,\n"
                    "         9.9900e+02+9.9900e+02j],\n"
                    "        [1.0000e+03+1.0000e+03j, 1.0010e+03+1.0010e+03j, 1.0020e+03+1.0020e+03j,\n"
                    "          ..., 1.9970e+03+1.9970e+03j, 1.9980e+03+1.9980e+03j,\n"
                    "         1.9990e+03+1.9990e+03j]])")


# ------------------------------------------------------------------ making them

def test_randn_of_a_complex_dtype_has_parts_of_variance_one_half():
    z = engine.randn(200_000, dtype=engine.cfloat).numpy()
    assert z.dtype == np.complex64
    assert abs(z.real.var() - 0.5) < 0.01 and abs(z.imag.var() - 0.5) < 0.01 and abs(np.mean(np.abs(z) ** 2) - 1) < 0.01
    assert abs(np.corrcoef(z.real, z.imag)[0, 1]) < 0.01
    u = engine.rand(100_000, dtype=engine.cdouble).numpy()
    assert u.dtype == np.complex128 and 0 <= u.real.min() and u.real.max() < 1 and 0 <= u.imag.min() < 0.01
    assert abs(u.imag.mean() - 0.5) < 0.01


def test_manual_seed_repeats_complex_draws():
    engine.manual_seed(5)
    a = engine.randn(4, dtype=engine.cfloat)
    engine.manual_seed(5)
    assert engine.equal(a, engine.randn(4, dtype=engine.cfloat))


def test_the_default_complex_dtype_follows_the_default_float_dtype():
    engine.set_default_dtype(engine.float64)
    try:
        assert engine.tensor(1j).dtype == engine.complex128 and engine.full((1,), 1j).dtype == engine.complex128
        assert engine.randn(1, dtype=complex).dtype == engine.complex128
        assert repr(engine.tensor([1j])) == "tensor([0.+1.j])"  # (the default complex dtype is not shown)
    finally:
        engine.set_default_dtype(engine.float32)
    assert engine.tensor(1j).dtype == engine.complex64


def test_real_and_imag_are_views_that_write_through():
    z = engine.tensor([1 + 2j, 3 - 4j])
    z.real.mul_(10)
    z.imag[1] = 7
    assert z.tolist() == [10 + 2j, 30 + 7j]
    z.real = engine.tensor([0.5, 0.25])
    assert z.tolist() == [0.5 + 2j, 0.25 + 7j]
    v = engine.view_as_real(z)
    v[0, 1] = -1
    assert z.tolist()[0] == 0.5 - 1j
    back = engine.view_as_complex(v)
    back[1] = 9j
    assert z.tolist()[1] == 9j


def test_view_as_real_of_a_transposed_tensor_is_a_view_too(device):
    z = engine.tensor([[1 + 2j, 3 + 4j], [5 + 6j, 7 + 8j]], device=device)
    v = engine.view_as_real(z.t())
    assert v.cpu().tolist() == [[[1, 2], [5, 6]], [[3, 4], [7, 8]]]
    v[0, 1, 1] = -6
    assert z.cpu().tolist()[1][0] == 5 - 6j


def test_casting_a_complex_tensor_to_a_real_dtype_keeps_the_real_part_and_warns():
    z = engine.tensor([1.5 + 2j])
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        assert z.float().tolist() == [1.5]
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert z.to(engine.int64).tolist() == [1]


# ------------------------------------------------------------------ on a GPU (the stand-in, or a real one)

@pytest.mark.parametrize("expr", ["z * w", "z @ w.mH", "z.abs()", "z.angle()", "z.sgn()", "z.real", "z.conj()",
                                  "engine.view_as_real(z)", "engine.complex(r, p)", "engine.polar(p, r)",
                                  "z.var()", "z.norm()", "engine.linalg.inv(z)", "engine.linalg.solve(z, w)",
                                  "r.to(engine.complex128) * z", "engine.vdot(z[0], w[1])", "z.exp().sqrt()"])
def test_complex_values_and_gradients_on_a_gpu_are_the_cpus(expr, device):
    def run(dev):
        env = {k: engine.tensor(a, requires_grad=True, device=dev) for k, a in _LEAVES.items()}
        out = eval(expr, {"engine": engine, **env})  # noqa: S307
        c = engine.tensor(_weights(tuple(out.shape), out.is_complex()), device=dev)
        ((out * c).real.sum() if out.is_complex() else (out * c).sum()).backward()
        return [out.detach().cpu().numpy()] + [None if t.grad is None else t.grad.cpu().numpy() for t in env.values()]

    for a, b in zip(run(device), run("cpu"), strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_random_complex_tensors_on_a_gpu(device):
    z = engine.randn(1000, dtype=engine.cfloat, device=device)
    assert z.dtype == engine.complex64 and z.device.type == device.split(":")[0]
    assert abs(float(z.abs().pow(2).mean()) - 1.0) < 0.2


# ------------------------------------------------------------------ optimizers: a complex parameter steps as its parts

_OPTIMIZERS = [("SGD", {"lr": 0.01}), ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
               ("Adam", {"lr": 0.1}), ("AdamW", {"lr": 0.1, "amsgrad": True}), ("Adam", {"lr": 0.1, "maximize": True}),
               ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}), ("Adagrad", {"lr": 0.1}),
               ("Adadelta", {"lr": 1.0}), ("Adamax", {"lr": 0.1}), ("NAdam", {"lr": 0.1}), ("RAdam", {"lr": 0.1}),
               ("ASGD", {"lr": 0.01}), ("Rprop", {"lr": 0.01})]


def _fit(lib, name, settings, steps=5):
    """``steps`` steps of |A z - b|^2 over a complex z; z and the optimizer."""
    rng = np.random.default_rng(4)
    a = lib.tensor(rng.normal(size=(6, 4)) + 1j * rng.normal(size=(6, 4)))
    b = lib.tensor(rng.normal(size=6) + 1j * rng.normal(size=6))
    z = lib.nn.Parameter(lib.tensor(rng.normal(size=4) + 1j * rng.normal(size=4)))
    if name == "LBFGS":
        opt = lib.optim.LBFGS([z], lr=0.5, max_iter=4)  # (short of the minimum: where rounding decides when to stop)

        def closure():
            opt.zero_grad()
            loss = (a @ z - b).abs().pow(2).sum()
            loss.backward()
            return loss

        for _ in range(steps):
            opt.step(closure)
        return z, opt
    opt = getattr(lib.optim, name)([z], **settings)
    for _ in range(steps):
        opt.zero_grad()
        (a @ z - b).abs().pow(2).sum().backward()
        opt.step()
    return z, opt


@pytest.mark.torch
@pytest.mark.parametrize(("name", "settings"), [*_OPTIMIZERS, ("LBFGS", {})],
                         ids=[f"{n}{s}" for n, s in [*_OPTIMIZERS, ("LBFGS", {})]])
def test_optimizers_step_a_complex_parameter_as_pytorchs(name, settings):
    torch = pytest.importorskip("torch")
    steps = 2 if name == "LBFGS" else 5  # (L-BFGS is near the minimum by then: rounding decides when it stops)
    got, theirs = _fit(engine, name, settings, steps)[0], _fit(torch, name, settings, steps)[0]
    np.testing.assert_allclose(got.detach().numpy(), theirs.detach().numpy(), rtol=1e-8, atol=1e-10)


def test_adam_steps_a_complex_parameter_as_its_parts():
    """Without torch: Adam on z is Adam on the real pair (Re z, Im z), element by element."""
    z, _ = _fit(engine, "Adam", {"lr": 0.1}, steps=3)
    rng = np.random.default_rng(4)
    a = rng.normal(size=(6, 4)) + 1j * rng.normal(size=(6, 4))
    b = rng.normal(size=6) + 1j * rng.normal(size=6)
    w = engine.nn.Parameter(engine.tensor(np.stack([rng.normal(size=4), rng.normal(size=4)], -1)))  # (the same draws)
    opt = engine.optim.Adam([w], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (engine.tensor(a) @ engine.view_as_complex(w) - engine.tensor(b)).abs().pow(2).sum().backward()
        opt.step()
    np.testing.assert_allclose(z.detach().numpy(), engine.view_as_complex(w.detach()).numpy(), rtol=1e-12)


def test_a_complex_parameters_optimizer_state_is_complex_and_round_trips():
    z, opt = _fit(engine, "Adam", {"lr": 0.1}, steps=2)
    state = opt.state[z]
    assert state["exp_avg"].dtype == engine.complex128 and tuple(state["exp_avg"].shape) == (4,)
    state["exp_avg"].mul_(0.5)  # (a view of the buffer the updates use)
    assert np.allclose(opt.state[z]["exp_avg"].numpy(), state["exp_avg"].numpy())
    saved = opt.state_dict()
    assert saved["state"][0]["exp_avg_sq"].dtype == engine.complex128
    again = engine.optim.Adam([z], lr=0.1)
    again.load_state_dict(saved)
    assert np.array_equal(again.state[z]["exp_avg"].numpy(), state["exp_avg"].numpy())


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_optimizers_without_a_complex_form_refuse_one_as_pytorchs(name):
    z = engine.nn.Parameter(engine.ones(3, 3, dtype=engine.cfloat))
    z.grad = engine.ones(3, 3, dtype=engine.cfloat)
    with pytest.raises(RuntimeError, match=f"{name} does not support complex parameters"):
        getattr(engine.optim, name)([z]).step()


# ------------------------------------------------------------------ the checking tools take complex numbers


class _MissingConj(engine.autograd.Function):
    """z * z with the gradient of real numbers (2 z g): the conjugate is missing, the classic mistake."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z


class _RightConj(_MissingConj):
    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z.conj()


@pytest.mark.parametrize("fast", [False, True])
def test_gradcheck_takes_complex_inputs_and_outputs_and_finds_a_missing_conjugate(fast):
    z = engine.tensor(_LEAVES["z"][0], requires_grad=True)
    r = engine.tensor(_LEAVES["r"][0], requires_grad=True)
    check = engine.autograd.gradcheck
    assert check(lambda a: a.exp() * 2, (z,), fast_mode=fast)
    assert check(lambda a, b: (a * b).abs(), (z, r), fast_mode=fast)
    assert check(lambda a, b: engine.polar(b.abs() + 1, b) * a.conj(), (z, r), fast_mode=fast)
    assert check(_RightConj.apply, (z,), fast_mode=fast)
    assert not check(_MissingConj.apply, (z,), fast_mode=fast, raise_exception=False)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        check(_MissingConj.apply, (z,), fast_mode=fast)


def test_gradgradcheck_takes_complex_functions():
    z = engine.tensor(_LEAVES["z"][0], requires_grad=True)
    r = engine.tensor(_LEAVES["r"][0], requires_grad=True)
    assert engine.autograd.gradgradcheck(lambda a: (a * a).sin(), (z,))
    assert engine.autograd.gradgradcheck(lambda a, b: (a * b).angle(), (z, r))
    assert engine.autograd.gradgradcheck(lambda a: engine.fft.fft(a * a), (z,))


def test_assert_close_compares_complex_numbers_by_their_distance():
    z = engine.tensor([1 + 1j, 2 + 0j])
    engine.testing.assert_close(z, z + 1e-7j)
    engine.testing.assert_close(engine.tensor(1 + 2j), 1 + 2j)
    with pytest.raises(AssertionError, match=r"Greatest absolute difference: 0.0010000\d* at index \(0,\) \(up to "
                                             r"1e-05 allowed\)"):
        engine.testing.assert_close(z, z + 1e-3j)
    with pytest.raises(AssertionError, match="attribute 'dtype' do not match: engine.complex64 != engine.float32"):
        engine.testing.assert_close(z, z.real)


def test_jacobian_of_a_real_function_of_complex_numbers_and_the_refusal_of_a_complex_one():
    a = engine.tensor(_LEAVES["z"][0, :2])
    jac = engine.autograd.functional.jacobian(lambda t: (t * 2).abs(), a)
    np.testing.assert_allclose(jac.numpy(), np.diag(2 * a.numpy() / np.abs(a.numpy())), atol=1e-12)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs but got "
                                           "engine.complex128"):
        engine.autograd.functional.jacobian(lambda t: t * 2, a)


# ------------------------------------------------------------------ linalg.eig: complex eigenvalues of real matrices

_GENERAL = {"a": np.random.default_rng(3).normal(size=(4, 4)), "b": np.random.default_rng(4).normal(size=(2, 3, 3)),
            "z": _LEAVES["z"]}
EIGS = ["engine.linalg.eigvals(a).abs().sum()", "engine.linalg.eigvals(a).real.pow(2).sum()",
        "engine.linalg.eig(a)[0].imag.abs().sum()", "engine.linalg.eig(a)[1].abs().sum()",
        "(engine.linalg.eig(a)[1].abs() ** 2 * engine.arange(4.0)).sum()", "engine.linalg.eigvals(b).abs().sum()",
        "engine.linalg.eig(z)[0].abs().sum() + engine.linalg.eig(z)[1].abs().sum()"]


def _eig_run(lib, expr, device="cpu"):
    env = {k: lib.tensor(a, requires_grad=True, device=device) for k, a in _GENERAL.items()}
    loss = eval(expr.replace("engine.", "lib."), {"lib": lib, **env})  # noqa: S307
    loss.backward()
    return float(loss.item()), [env[k].grad.detach().cpu().numpy() if env[k].grad is not None else None for k in env]


@pytest.mark.parametrize("expr", EIGS)
def test_eig_gradients_are_finite_differences(expr):
    value, grads = _eig_run(engine, expr)
    for (name, base), g in zip(_GENERAL.items(), grads, strict=True):
        if g is None:
            continue
        assert g.dtype == base.dtype  # (a real matrix's gradient is real)
        numeric = np.zeros(base.shape, dtype=base.dtype)
        for k in range(base.size):
            for step in ((1.0, 1j) if base.dtype.kind == "c" else (1.0,)):
                values = []
                for sign in (1, -1):
                    moved = base.copy()
                    moved.reshape(-1)[k] += sign * 1e-6 * step
                    with engine.no_grad():
                        env = {k2: engine.tensor(moved if k2 == name else a) for k2, a in _GENERAL.items()}
                        values.append(float(eval(expr, {"engine": engine, **env})))  # noqa: S307
                numeric.reshape(-1)[k] += step * (values[0] - values[1]) / 2e-6
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.torch
@pytest.mark.parametrize("expr", EIGS)
def test_eig_values_and_gradients_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    (value, grads), (theirs, their_grads) = _eig_run(engine, expr), _eig_run(torch, expr)
    assert value == pytest.approx(theirs, rel=1e-12)
    for g, t in zip(grads, their_grads, strict=True):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(g, t, rtol=1e-8, atol=1e-9)


def test_eig_is_complex_and_refuses_a_loss_that_depends_on_an_eigenvectors_phase():
    a = engine.tensor([[1.0, -1.0], [1.0, 1.0]], requires_grad=True)  # eigenvalues 1 +- i
    values, vectors = engine.linalg.eig(a)
    assert values.dtype == engine.complex64 and sorted(values.tolist(), key=lambda v: v.imag) == [1 - 1j, 1 + 1j]
    np.testing.assert_allclose((a.detach().cfloat() @ vectors).detach().numpy(),
                               (vectors * values).detach().numpy(), atol=1e-6)
    with pytest.raises(RuntimeError, match="linalg_eig_backward: The eigenvectors in the complex case are specified "
                                           "up to multiplication by e\\^\\{i phi\\}"):
        vectors.real.sum().backward()


def test_eig_on_a_gpu_is_the_cpus(device):
    for expr in EIGS[:2] + EIGS[5:6]:
        value, grads = _eig_run(engine, expr, device)
        on_cpu, cpu_grads = _eig_run(engine, expr)
        assert value == pytest.approx(on_cpu, rel=1e-10)
        for g, c in zip(grads, cpu_grads, strict=True):
            if g is not None:
                np.testing.assert_allclose(g, c, rtol=1e-8, atol=1e-9)


# ------------------------------------------------------------------ writes through views of a complex tensor's parts

_Z0, _X0 = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j]), np.array([1.0, 2.0, -3.0])
VIEW_WRITES = {
    "real/imag in place on a non-leaf": "w = z * 1; w.real.mul_(3); w.imag.add_(1); loss = (w.abs() ** 2).sum()",
    "view_as_real scaled": "y = z * 2; r = L.view_as_real(y); r.mul_(2); loss = (y.abs() ** 2).sum() + r.sum()",
    "view_as_real column written": "y = z * 2; r = L.view_as_real(y); r[:, 1] = x; loss = (y * y).real.sum()",
    "view_as_complex scaled by 1j": "q = L.stack([x, x * 2], -1); c = L.view_as_complex(q); c.mul_(1j); "
                                    "loss = (q ** 2).sum() + q[:, 0].sum()",
    "plain real and imag written": "p = L.zeros(3, dtype=L.cdouble); p.real[:] = x * 2; p.imag.copy_(x); "
                                   "loss = (p.abs() ** 2).sum()",
    "plain pairs viewed, base written": "q = L.zeros(3, 2, dtype=L.float64); c = L.view_as_complex(q); q[:, 0] = x; "
                                        "loss = c.abs().sum()",
    "plain pairs viewed, view written": "q = L.zeros(3, 2, dtype=L.float64); c = L.view_as_complex(q); c.add_(z); "
                                        "loss = (q ** 2).sum()",
    "one real part set": "y = z * 1; y.real[1] = x[0]; loss = (y.abs() ** 2).sum()",
    "view read after the base is written": "y = z * 1; v = y.imag; y.mul_(2); loss = (v * x).sum()",
    "imag of a transposed matrix": "m = (z.unsqueeze(0) * z.unsqueeze(1)); t = m.t(); t.imag.mul_(x); "
                                   "loss = m.abs().sum()",
}


def _view_write(lib, code, z=_Z0, x=_X0, grad=True):
    env = {"L": lib, "z": lib.tensor(z, requires_grad=grad), "x": lib.tensor(x, requires_grad=grad)}
    exec(code, env)  # noqa: S102 - the test's own lines
    if not grad:
        return float(env["loss"])
    env["loss"].backward()
    return float(env["loss"].detach()), [None if env[k].grad is None else env[k].grad.detach().resolve_conj().numpy()
                                         for k in "zx"]


@pytest.mark.parametrize("name", VIEW_WRITES)
def test_a_write_through_a_view_of_parts_reaches_the_gradient(name):
    """Each write changes the tensor it views, and the gradient knows: against central differences of the same
    lines (run without autograd) in every real coordinate of z and x."""
    code = VIEW_WRITES[name]
    _, (gz, gx) = _view_write(engine, code)
    for leaf, base, g in (("z", _Z0, gz), ("x", _X0, gx)):
        numeric = np.zeros(base.shape, dtype=base.dtype)
        for k in range(base.size):
            for step in ((1.0, 1j) if base.dtype.kind == "c" else (1.0,)):
                values = []
                for sign in (1, -1):
                    moved = base.copy()
                    moved[k] += sign * 1e-6 * step
                    args = {"z": moved, "x": _X0} if leaf == "z" else {"z": _Z0, "x": moved}
                    with engine.no_grad():
                        values.append(_view_write(engine, code, grad=False, **args))
                numeric[k] += step * (values[0] - values[1]) / 2e-6
        np.testing.assert_allclose(g if g is not None else 0 * numeric, numeric, rtol=1e-6, atol=1e-6, err_msg=leaf)


@pytest.mark.torch
@pytest.mark.parametrize("name", VIEW_WRITES)
def test_a_write_through_a_view_of_parts_is_pytorchs(name):
    torch = pytest.importorskip("torch")
    (loss, grads), (theirs, their_grads) = _view_write(engine, VIEW_WRITES[name]), _view_write(torch,
                                                                                                  VIEW_WRITES[name])
    assert loss == pytest.approx(theirs, rel=1e-12)
    for g, t in zip(grads, their_grads, strict=True):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


def test_a_view_of_a_leafs_parts_refuses_an_in_place_write():
    z = engine.tensor([1 + 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        z.real.mul_(2)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        engine.view_as_real(z)[0, 1] = 0.0
